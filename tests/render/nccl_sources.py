"""What test_nccl_loader.py compiles NCCL's topology loader from, pinned, and `make nccl-deps` fetching it once
into .cache/ (git-ignored) from the package registries, so the test runs on a fresh machine:

- NCCL's source: Debian's nvidia-nccl source package (contrib, unstable), its upstream tarball as Debian ships
  it (SHA-256 from Debian's signed Sources index), downloaded with apt's own helper from the Debian mirror
  this machine's apt is configured with;
- the CUDA headers (no libraries, no GPU): the include/ trees of three pinned CUDA wheels from the pip index,
  hash-checked by pip, assembled into one include/ directory.

Run as a script it fetches what is missing: exit 1 when a download fails in CI (CI=true), a note and exit 0
elsewhere, where the test then skips with the reason.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

CACHE = Path(__file__).resolve().parents[2] / ".cache"

NCCL_VERSION = "2.29.7"
NCCL_DEBIAN_POOL = "pool/contrib/n/nvidia-nccl"
NCCL_ARCHIVE = CACHE / "nccl" / "nvidia-nccl_2.29.7-1.orig.tar.gz"
NCCL_ARCHIVE_SHA256 = "e67239212c395bfdb398a7519491840d06fdf6b599c299f97c7ed0109777bba1"
NCCL_ARCHIVE_TOP = "nccl-2.29.7-1"

CUDA_HEADERS = CACHE / "cuda-headers"
# name==version and the SHA-256 of its manylinux2014_x86_64 wheel (headers are the same on every platform)
CUDA_WHEELS = {
    "nvidia-cuda-runtime==13.0.96": "7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548",
    "nvidia-cuda-cccl==13.0.85": "e0da7ad981f3a8aff08241b5bfc1af868742a63e2762f53a5171c492ef242649",
    "nvidia-cuda-crt==13.0.88": "2c8043c7c9e02492716426e9919fc78d2c5b3b2a7a768a88e952676b08aa55a4",
}
WHEEL_INCLUDE = "nvidia/cu13/include/"
APT_HELPER = "/usr/lib/apt/apt-helper"


class FetchError(Exception):
    pass


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cuda_stamp() -> Path:
    return CUDA_HEADERS / "include" / ".wheels"


def cuda_headers_ready() -> bool:
    stamp = _cuda_stamp()
    return stamp.is_file() and stamp.read_text().split() == sorted(CUDA_WHEELS)


def fetch_cuda_headers() -> None:
    if cuda_headers_ready():
        return
    include = CUDA_HEADERS / "include"
    shutil.rmtree(CUDA_HEADERS, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text("".join(f"{req} --hash=sha256:{digest}\n" for req, digest in CUDA_WHEELS.items()))
        download = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--platform",
                "manylinux2014_x86_64",
                "--require-hashes",
                "-r",
                str(requirements),
                "-d",
                tmp,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if download.returncode != 0:
            raise FetchError(f"pip download of the CUDA header wheels failed: {download.stderr[-800:]}")
        for wheel in sorted(Path(tmp).glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    if member.startswith(WHEEL_INCLUDE) and not member.endswith("/"):
                        target = include / member[len(WHEEL_INCLUDE) :]
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(archive.read(member))
    _cuda_stamp().write_text("\n".join(sorted(CUDA_WHEELS)) + "\n")


def _debian_mirror() -> str:
    """The Debian archive this machine's apt uses (its sources name it; no host is written here)."""
    targets = subprocess.run(
        ["apt-get", "indextargets", "--format", "$(REPO_URI)"], capture_output=True, text=True, check=False
    )
    for uri in targets.stdout.split():
        if uri.rstrip("/").endswith("/debian"):
            return uri.rstrip("/") + "/"
    raise FetchError("no Debian archive among apt's sources (apt-get indextargets)")


def nccl_archive_ready() -> bool:
    return NCCL_ARCHIVE.is_file() and sha256(NCCL_ARCHIVE) == NCCL_ARCHIVE_SHA256


def fetch_nccl_source() -> None:
    if nccl_archive_ready():
        return
    if not Path(APT_HELPER).is_file():
        raise FetchError(f"{APT_HELPER} (Debian's apt) is needed to download NCCL's source package")
    NCCL_ARCHIVE.parent.mkdir(parents=True, exist_ok=True)
    uri = f"{_debian_mirror()}{NCCL_DEBIAN_POOL}/{NCCL_ARCHIVE.name}"
    download = subprocess.run(
        [APT_HELPER, "download-file", uri, str(NCCL_ARCHIVE), f"SHA256:{NCCL_ARCHIVE_SHA256}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if download.returncode != 0:
        NCCL_ARCHIVE.unlink(missing_ok=True)
        raise FetchError(
            f"download of {uri} failed (once Debian replaces nvidia-nccl {NCCL_VERSION}, pin the new "
            f"version and its SHA-256 from its Sources entry here): {download.stderr.strip()[-400:]}"
        )


def main() -> int:
    problems = []
    for fetch in (fetch_cuda_headers, fetch_nccl_source):
        try:
            fetch()
        except FetchError as error:
            problems.append(str(error))
    for problem in problems:
        print(f"nccl-deps: {problem}", file=sys.stderr)
    if problems and os.environ.get("CI") != "true":
        print("nccl-deps: tests/render/test_nccl_loader.py will be skipped", file=sys.stderr)
        return 0
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
