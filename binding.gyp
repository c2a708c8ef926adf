{
  "targets": [
    {
      "target_name": "relevance_gate",
      "sources": [
        "native/src/addon.cc",
        "native/src/features/case_fold.cc",
        "native/src/features/code_point_class.cc",
        "native/src/features/corpus_stats.cc",
        "native/src/features/extractor.cc",
        "native/src/features/features_binding.cc",
        "native/src/features/porter_stemmer.cc",
        "native/src/features/stop_words.cc",
        "native/src/features/terms.cc",
        "native/src/hash/hash_binding.cc",
        "native/src/hash/xxh64.cc",
        "native/src/trees/tree_eval.cc",
        "native/src/trees/tree_kernels.cc",
        "native/src/trees/trees_binding.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native/src"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++14", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-Wall", "-Wextra"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUSFLAGS": ["-O3"]
      },
      "msvs_settings": { "VCCLCompilerTool": { "ExceptionHandling": 1, "AdditionalOptions": ["/std:c++17"] } },
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
