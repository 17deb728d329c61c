"""The Debian package, built from the session's PyInstaller bundle by
packaging/build_deb.py, installed with dpkg into a clean Debian root (debootstrap
minbase plus only the package's Depends, run through chroot), then used and removed:

- the package's metadata: files under /opt/cashier, /usr/bin links, desktop entry (en,
  zh_CN) and icon, the systemd unit, the conffile, maintainer scripts, computed Depends;
- `dpkg -i` in the clean root succeeds (Depends are complete), postinst made the system
  user, /var/lib/cashier (0750, the user's) and the 0600 secrets file;
- every program's smoke mode from the installed paths (/usr/bin links), the terminal on
  Qt's offscreen platform; the reconcile service as its own user with the packaged
  config writes its books into /var/lib/cashier (a real Redis on the host);
- `systemd-analyze verify` of the unit inside the root (its own systemd);
- `dpkg -r` keeps the books, the edited conffile and the user; `dpkg -P` deletes them.

The clean root (minbase + Depends + systemd, which every till has and the unit check
needs) is cached as a tarball (debootstrap takes about a minute) under
$CASHIER_DEB_ROOT_CACHE (default /var/cache/cashier-ci), keyed by suite and Depends, so
CI reuses it. Needs root (chroot), debootstrap and dpkg-deb: skipped, saying which is
missing, elsewhere; .ci/run installs them.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.support.servers import RedisServer, redis_server_available

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
import build_deb  # noqa: E402  (packaging/ is not a package: its name would shadow PyPI's `packaging`)

RUN_TIMEOUT_S = 300
CACHE_DIR = Path(os.environ.get("CASHIER_DEB_ROOT_CACHE", "/var/cache/cashier-ci"))
MIRROR = os.environ.get("CASHIER_DEB_MIRROR", "http://deb.debian.org/debian")
USER = "cashier-reconcile"


def _missing() -> str | None:
    if importlib.util.find_spec("PyInstaller") is None:
        return "PyInstaller is not installed (pip install -e '.[build]')"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "installing into a clean root needs root (chroot)"
    for tool in ("dpkg-deb", "debootstrap", "readelf"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (apt install dpkg-dev debootstrap binutils; .ci/run does)"
    return None


pytestmark = [pytest.mark.build, pytest.mark.timeout(1500), pytest.mark.skipif(_missing() is not None, reason=str(_missing()))]


def suite() -> str:
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip('"')
    return "bookworm"


def sh(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=RUN_TIMEOUT_S, **kwargs)
    if check:
        assert result.returncode == 0, (args, result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def deb(bundle, tmp_path_factory) -> Path:
    return build_deb.build(bundle, tmp_path_factory.mktemp("deb"), compression="gzip")


def depends_packages(deb_path: Path) -> list[str]:
    field = sh("dpkg-deb", "-f", str(deb_path), "Depends").stdout
    return sorted(part.split()[0] for part in field.split(","))


def root_tarball(packages: list[str]) -> Path:
    """minbase + the package's Depends, made once and kept (a file lock for parallel runs)."""
    key = hashlib.sha256(" ".join([suite(), MIRROR, "systemd", *packages]).encode()).hexdigest()[:12]
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tarball = CACHE_DIR / f"debootstrap-{suite()}-minbase-{key}.tar"
    with open(CACHE_DIR / "debootstrap.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not tarball.exists():
            work = CACHE_DIR / f"work-{key}"
            shutil.rmtree(work, ignore_errors=True)
            # + systemd: every till has it, and `systemd-analyze verify --root` needs its
            # targets in the root (minbase has no init); it brings none of our Depends
            extra = [p for p in packages if p != "libc6"] + ["systemd"]
            sh("debootstrap", "--variant=minbase", f"--include={','.join(extra)}", suite(), str(work), MIRROR)
            shutil.rmtree(work / "var/cache/apt/archives", ignore_errors=True)
            (work / "var/cache/apt/archives/partial").mkdir(parents=True)
            partial = tarball.with_suffix(".partial")
            sh("tar", "-C", str(work), "--numeric-owner", "-cf", str(partial), ".")
            partial.rename(tarball)
            shutil.rmtree(work)
    return tarball


class Chroot:
    """A fresh copy of the cached root, with /proc mounted, to run commands in."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: str, user: str | None = None, env: dict | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
                "HOME": "/root"}
        spec = [f"--userspec={user}:{user}"] if user else []
        return sh("chroot", *spec, str(self.path), *args, env={**base, **(env or {})}, check=check)

    def exists(self, path: str) -> bool:
        return os.path.lexists(self.path / path.lstrip("/"))


@pytest.fixture(scope="module")
def clean_root(deb, tmp_path_factory):
    tarball = root_tarball(depends_packages(deb))
    path = tmp_path_factory.mktemp("root") / "root"
    path.mkdir()
    sh("tar", "-C", str(path), "--numeric-owner", "-xf", str(tarball))
    shutil.copyfile("/etc/resolv.conf", path / "etc/resolv.conf") if Path("/etc/resolv.conf").exists() else None
    sh("mount", "-t", "proc", "proc", str(path / "proc"))
    try:
        yield Chroot(path)
    finally:
        subprocess.run(["umount", "-l", str(path / "proc")], capture_output=True)
        shutil.rmtree(path, ignore_errors=True)


def test_package_holds_programs_links_menu_entry_unit_and_conffile(deb):
    listing = sh("dpkg-deb", "-c", str(deb)).stdout
    for path in ("./opt/cashier/cashier-terminal", "./opt/cashier/reconcile-service", "./opt/cashier/cashierctl",
                 "./opt/cashier/_internal/core/lua/deduct.lua",
                 "./usr/share/applications/cashier-terminal.desktop",
                 "./usr/share/icons/hicolor/scalable/apps/cashier-terminal.svg",
                 "./lib/systemd/system/cashier-reconcile.service", "./etc/cashier/reconcile.toml",
                 "./usr/share/doc/cashier/copyright"):
        assert f" {path}" in listing, path
    for program in build_deb.PROGRAMS:
        assert f"./usr/bin/{program} -> /opt/cashier/{program}" in listing
    assert all(" root/root " in line for line in listing.splitlines())      # whoever built it
    assert "libgtk" not in listing and "platformthemes" not in listing and "wayland" not in listing.lower()
    info = sh("dpkg-deb", "-I", str(deb)).stdout
    assert "Package: cashier" in info and "conffiles" in info
    for script in ("postinst", "prerm", "postrm"):
        assert script in info
    depends = sh("dpkg-deb", "-f", str(deb), "Depends").stdout
    assert depends.startswith("libc6 (>= 2.")
    assert sh("dpkg-deb", "-f", str(deb), "Version").stdout.strip() == f"{build_deb.version()}-1"
    desktop = (build_deb.DEB_DIR / "cashier-terminal.desktop").read_text()
    assert "Name=Cashier Terminal" in desktop and "Name[zh_CN]=收银终端" in desktop
    if shutil.which("desktop-file-validate"):
        sh("desktop-file-validate", str(build_deb.DEB_DIR / "cashier-terminal.desktop"))


@pytest.mark.skipif(not redis_server_available(), reason="needs a redis-server binary")
def test_install_use_remove_purge_in_a_clean_root(deb, clean_root):
    root = clean_root
    assert not root.exists("/opt/cashier") and root.run("getent", "passwd", USER, check=False).returncode == 2
    shutil.copyfile(deb, root.path / "tmp/cashier.deb")

    # install: every dependency is in the clean root (minbase + Depends), postinst ran
    installed = root.run("dpkg", "-i", "/tmp/cashier.deb", check=False)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    passwd = root.run("getent", "passwd", USER).stdout.strip().split(":")
    assert passwd[5] == "/var/lib/cashier" and passwd[6] == "/usr/sbin/nologin" and int(passwd[2]) < 1000
    data = os.stat(root.path / "var/lib/cashier")
    assert oct(data.st_mode & 0o777) == "0o750" and data.st_uid == int(passwd[2])
    secrets = os.stat(root.path / "etc/cashier/reconcile.env")
    assert oct(secrets.st_mode & 0o777) == "0o600" and secrets.st_uid == 0

    # each program's smoke mode from the installed commands
    assert root.run("cashierctl", "--version").stdout.startswith("cashierctl ")
    assert "from the bundle at /opt/cashier/_internal" in root.run("/usr/bin/cashierctl", "self-test").stdout
    assert "self-test: OK" in root.run("/usr/bin/reconcile-service", "self-test", user=USER,
                                       env={"HOME": "/var/lib/cashier"}).stdout
    terminal = root.run("/usr/bin/cashier-terminal", "--self-test", env={"QT_QPA_PLATFORM": "offscreen"})
    assert "self-test: OK" in terminal.stdout and "main window built" in terminal.stdout

    # the service as its own user with the packaged config: its books land in /var/lib/cashier
    with RedisServer() as server:
        for argv in (("init",), ("open", "P-1", "--initial", "9.00", "--txn-id", "p-open")):
            root.run("cashierctl", "--redis-url", server.url, *argv)
        once = root.run("/opt/cashier/reconcile-service", "run", "--once", "--config", "/etc/cashier/reconcile.toml",
                        "--redis-url", server.url, "--log-format", "text", user=USER, check=False)
        assert once.returncode == 0, once.stdout + once.stderr
    books = root.path / "var/lib/cashier/reconcile.sqlite3"
    assert books.is_file() and os.stat(books).st_uid == int(passwd[2])

    # the unit, checked by the root's own systemd against the installed tree
    verify = root.run("systemd-analyze", "verify", "cashier-reconcile.service", check=False)
    problems = [line for line in (verify.stdout + verify.stderr).splitlines()
                if "cashier-reconcile" in line or "reconcile-service" in line]
    assert verify.returncode == 0 and not problems, verify.stdout + verify.stderr

    # remove: programs gone; books, edited config and the user stay
    conf = root.path / "etc/cashier/reconcile.toml"
    conf.write_text(conf.read_text() + "\nbatch_size = 500   # edited by the shop\n")
    root.run("dpkg", "-r", "cashier")
    for gone in ("/opt/cashier", "/usr/bin/cashierctl", "/usr/bin/cashier-terminal",
                 "/lib/systemd/system/cashier-reconcile.service", "/usr/share/applications/cashier-terminal.desktop"):
        assert not root.exists(gone), gone
    assert books.is_file() and "edited by the shop" in conf.read_text()
    assert root.exists("/etc/cashier/reconcile.env") and root.run("getent", "passwd", USER).returncode == 0

    # purge: the books, the config, the secrets and the user go too
    root.run("dpkg", "-P", "cashier")
    for gone in ("/var/lib/cashier", "/etc/cashier"):
        assert not root.exists(gone), gone
    assert root.run("getent", "passwd", USER, check=False).returncode == 2
    assert root.run("getent", "group", USER, check=False).returncode == 2
    assert "cashier" not in root.run("dpkg-query", "-W", "-f", "${Package}\\n").stdout.split()
