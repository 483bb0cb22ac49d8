"""Rebuild tiktoken's o200k_base.tiktoken offline, from the npm package js-tiktoken.

lightrag-server loads the o200k_base tokenizer at start; tiktoken downloads it from a blob
store this machine cannot reach, unless TIKTOKEN_CACHE_DIR already holds it under the sha1
hex of the blob URL. js-tiktoken (npm registry, reachable) ships the same ranks in a compact
form: lines "! OFFSET TOK TOK ..." where the n-th base64 token has rank OFFSET + n. Expanded
back to tiktoken's "BASE64 RANK" lines in rank order, the file is byte-identical to the
original, which is checked against the sha256 tiktoken itself expects (read from the
installed tiktoken when it can be found, else the pinned copy below) — any mismatch fails.

Usage: python tests/lightrag_server/tiktoken_offline.py CACHE_DIR [--tiktoken-source FILE]
Idempotent: a verified file already in CACHE_DIR is left alone. Stdlib only.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

JS_TIKTOKEN_VERSION = "1.0.21"  # has dist/ranks/o200k_base.js
RANKS_MEMBER = "package/dist/ranks/o200k_base.js"

# Pinned from tiktoken 0.14.0 tiktoken_ext/openai_public.py, used only when no installed
# tiktoken source can be found; a found source always wins.
PINNED_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
PINNED_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

REPO = Path(__file__).resolve().parents[2]


class BuildError(RuntimeError):
    pass


def find_tiktoken_source(explicit: str | None) -> Path | None:
    if explicit:
        return Path(explicit)
    spec = None
    try:
        spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        return Path(spec.origin)
    pattern = str(REPO / ".venv-lightrag/lib/python*/site-packages/tiktoken_ext/openai_public.py")
    found = sorted(glob.glob(pattern))
    return Path(found[-1]) if found else None


def expected_url_and_hash(source: Path | None) -> tuple[str, str, str]:
    """(blob URL, sha256, where it came from) for o200k_base, as tiktoken expects them."""
    if source is None:
        return PINNED_URL, PINNED_SHA256, "pinned copy (no installed tiktoken found)"
    text = source.read_text(encoding="utf-8")
    match = re.search(
        r"def o200k_base\(\).*?load_tiktoken_bpe\(\s*\"([^\"]+)\",\s*expected_hash=\"([0-9a-f]{64})\"",
        text,
        re.S,
    )
    if not match:
        raise BuildError(f"cannot find o200k_base's URL and expected_hash in {source}")
    return match.group(1), match.group(2), str(source)


def cache_file_name(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()


def fetch_ranks_js(workdir: Path) -> str:
    """npm pack js-tiktoken into workdir and return the text of its o200k_base ranks."""
    proc = subprocess.run(
        ["npm", "pack", f"js-tiktoken@{JS_TIKTOKEN_VERSION}", "--pack-destination", str(workdir)],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BuildError(
            f"npm pack js-tiktoken@{JS_TIKTOKEN_VERSION} failed:\n{proc.stderr[-2000:]}"
        )
    tarballs = list(workdir.glob("js-tiktoken-*.tgz"))
    if len(tarballs) != 1:
        raise BuildError(f"expected one js-tiktoken tarball in {workdir}, found {tarballs}")
    with tarfile.open(tarballs[0]) as tar:
        member = tar.extractfile(RANKS_MEMBER)
        if member is None:
            raise BuildError(f"{RANKS_MEMBER} missing from {tarballs[0].name}")
        return member.read().decode("utf-8")


def expand_ranks(js_text: str) -> bytes:
    """Turn js-tiktoken's `export default {...}` module into tiktoken's file format."""
    body = js_text.strip()
    prefix = "export default"
    if not body.startswith(prefix):
        raise BuildError("unexpected js-tiktoken ranks module: no 'export default'")
    body = body[len(prefix) :].strip().rstrip(";")
    data = json.loads(body)
    by_rank: dict[int, str] = {}
    for line in data["bpe_ranks"].split("\n"):
        if not line:
            continue
        _, offset_str, *tokens = line.split(" ")
        offset = int(offset_str)
        for i, token in enumerate(tokens):
            rank = offset + i
            if rank in by_rank:
                raise BuildError(f"rank {rank} appears twice in js-tiktoken data")
            by_rank[rank] = token
    return "".join(f"{by_rank[r]} {r}\n" for r in sorted(by_rank)).encode("ascii")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build(cache_dir: Path, tiktoken_source: str | None = None) -> Path:
    url, expected, origin = expected_url_and_hash(find_tiktoken_source(tiktoken_source))
    target = cache_dir / cache_file_name(url)
    if target.is_file() and sha256(target.read_bytes()) == expected:
        print(f"tiktoken o200k_base already verified at {target}")
        return target
    with tempfile.TemporaryDirectory(prefix="js-tiktoken-") as tmp:
        blob = expand_ranks(fetch_ranks_js(Path(tmp)))
    actual = sha256(blob)
    if actual != expected:
        raise BuildError(
            f"o200k_base rebuilt from js-tiktoken@{JS_TIKTOKEN_VERSION} has sha256 {actual}, "
            f"but tiktoken expects {expected} (from {origin}); refusing to write it"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(blob)
    os.replace(partial, target)
    print(f"tiktoken o200k_base written to {target} (sha256 {actual} verified against {origin})")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache_dir", help="folder to use as TIKTOKEN_CACHE_DIR")
    parser.add_argument("--tiktoken-source", help="path of tiktoken_ext/openai_public.py")
    args = parser.parse_args(argv)
    try:
        build(Path(args.cache_dir), args.tiktoken_source)
    except BuildError as exc:
        print(f"tiktoken_offline: FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
