"""Finds the files shipped with the program (Lua scripts, translations), in a source
checkout, an installed wheel and a PyInstaller bundle alike. The one place that knows
where data files live: nothing else guesses paths.
"""
from __future__ import annotations

import sys
from pathlib import Path


def package_root() -> Path:
    """The directory that holds the `core`, `desktop`, ... packages."""
    bundle = getattr(sys, "_MEIPASS", None)   # set by PyInstaller's bootloader
    if bundle:
        return Path(bundle)
    return Path(__file__).resolve().parent.parent


def resource_path(*parts: str) -> Path:
    """Path of a shipped data file, e.g. resource_path('core', 'lua', 'deduct.lua')."""
    return package_root().joinpath(*parts)


def lua_dir() -> Path:
    return resource_path("core", "lua")
