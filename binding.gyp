{
  "targets": [
    {
      "target_name": "relevance_gate",
      "sources": [
        "native/src/addon.cc",
        "<!@(ls -1 native/src/trees/*.cc native/src/features/*.cc)"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native/src"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++14", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [
        ["OS=='linux'", { "cflags_cc": ["-march=x86-64-v2"] }]
      ]
    }
  ]
}
