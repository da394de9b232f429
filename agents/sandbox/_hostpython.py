"""What of the host's Python installation the sandbox tree must contain."""
from __future__ import annotations

import functools
import glob
import os
import re
import subprocess
import sys
import sysconfig
from typing import Any

_NEEDED = re.compile(r"^\s*(\S+) => (/\S+) \(0x")
_INTERP = re.compile(r"^\s*(/\S+) \(0x")


def _ldd(files: list[str]) -> tuple[dict[str, str], str | None]:
    """Shared libraries (soname -> host path) and the ELF interpreter of ``files``."""
    out = subprocess.run(["ldd", *files], capture_output=True, text=True, check=False,
                         env={"LANG": "C", "PATH": os.defpath}, timeout=60).stdout
    libs: dict[str, str] = {}
    interp = None
    for line in out.splitlines():
        if m := _NEEDED.match(line):
            libs.setdefault(m.group(1), os.path.realpath(m.group(2)))
        elif m := _INTERP.match(line):
            interp = interp or m.group(1)
    return libs, interp


@functools.lru_cache(maxsize=1)
def host_python() -> dict[str, Any]:
    """Paths of the interpreter binary, its stdlib and the libraries they load.

    ``libs_ok`` is False (with ``problem``) when the libraries could not be listed;
    the launcher then cannot build the minimal tree and says so.
    """
    binary = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    dynload = sysconfig.get_config_var("DESTSHARED") or os.path.join(stdlib, "lib-dynload")
    dynload = os.path.realpath(dynload) if os.path.isdir(dynload) else ""
    info: dict[str, Any] = {
        "binary": binary, "stdlib": stdlib, "dynload": dynload,
        "version_dir": f"python{sys.version_info.major}.{sys.version_info.minor}",
        "hidden": [d for d in ("site-packages", "dist-packages") if os.path.isdir(os.path.join(stdlib, d))],
        "libs": {}, "interp": "", "libs_ok": False, "problem": "",
    }
    try:
        libs, interp = _ldd([binary] + sorted(glob.glob(os.path.join(dynload, "*.so"))))
    except (OSError, subprocess.SubprocessError) as exc:
        info["problem"] = f"cannot list shared libraries with ldd: {exc}"
        return info
    if not interp:
        info["problem"] = "ldd did not report the ELF interpreter"
        return info
    info.update(libs=libs, interp=interp, libs_ok=True)
    return info
