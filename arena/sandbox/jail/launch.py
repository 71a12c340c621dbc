"""The launcher of a bot program (a ``.js`` file, a ``bot.toml`` folder): hardens itself, then execs it.

Run by the referee (:mod:`arena.sandbox.programs.process`) as ``python -I -c ... CONFIG`` in a new
session, with the program's stdin and stdout as pipes to the referee, its stderr a pipe, and
a pipe for the layers report (``report_fd``). It takes the OS layers of a Python bot's game
process, fitted to a program:

``workdir``  chdir into the bot's stage folder (its own files only, owned by root, mode 0555:
             read-only to the bot's uid).
``netns``    a new, empty network namespace.
``uid``      its own unprivileged uid and gid, no groups, no capabilities (when run as root).
``rlimits``  RLIMIT_DATA (not RLIMIT_AS: V8 reserves far more address space than it uses and
             dies at start under a 512 MB RLIMIT_AS), RLIMIT_FSIZE 0, RLIMIT_CORE 0,
             RLIMIT_CPU (a backstop), RLIMIT_NOFILE, RLIMIT_NPROC (threads: the uid is its own).
``no_new_privs`` and not dumpable.
``seccomp``  the program allowlist (:mod:`arena.sandbox.jail.program_filter`).

It writes the report (marshal) to that pipe before the program runs (so the
program cannot forge it), closes it, and execs the program with a near-empty environment.
Nothing is imported after the layers are in force but what the exec needs.
"""

from __future__ import annotations

import marshal
import os
import resource
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1


def _lower(res: int, soft: int, hard: int) -> None:
    resource.setrlimit(res, (soft, hard))
    if resource.getrlimit(res) != (soft, hard):
        raise RuntimeError(f"limit {res} reads back {resource.getrlimit(res)}")


def _rlimits(cfg: dict[str, Any]) -> str:
    mem = int(cfg["memory_bytes"])
    cpu = int(cfg["cpu_seconds"])
    fsize = int(cfg.get("file_bytes", 0))
    nofile = 256 if cfg.get("mode") == "build" else 64
    _lower(resource.RLIMIT_DATA, mem, mem)
    _lower(resource.RLIMIT_FSIZE, fsize, fsize)
    _lower(resource.RLIMIT_CORE, 0, 0)
    _lower(resource.RLIMIT_CPU, cpu, cpu + 1)
    _lower(resource.RLIMIT_NOFILE, nofile, nofile)
    nproc = int(cfg["threads"])
    _lower(resource.RLIMIT_NPROC, nproc, nproc)
    return f"DATA={mem} FSIZE={fsize} CORE=0 CPU={cpu}/{cpu + 1} NOFILE={nofile} NPROC={nproc}"


_CLONE_NEWNS = 0x00020000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000


#: What a program sees of the machine's files (read-only), besides its own folder as ``/bot``.
SYSTEM_DIRS = ("usr", "etc", "bin", "lib", "lib64", "sbin")
DEVICES = ("null", "zero", "urandom", "random")
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 0x1, 0x2, 0x4, 0x20, 0x1000


def _private_root(stage: str, build: bool = False) -> None:
    """A new mount namespace and root: the system's folders read-only, a few devices, the
    bot's own folder as ``/bot`` (read-only), and nothing else: no /tmp, /proc, /home, /root,
    /srv or wherever the organiser keeps databases, records and the other bots. A build's
    ``/bot`` is writable, and it gets a private tmpfs ``/tmp`` (a compiler's scratch space)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def mount(src: bytes | None, dst: str, fstype: bytes | None, flags: int, data: bytes | None = None) -> None:
        if libc.mount(src, dst.encode(), fstype, flags, data) != 0:
            raise RuntimeError(f"mount {dst}: errno {ctypes.get_errno()}")

    def bind(src: str, dst: str, writable: bool = False) -> None:
        mount(src.encode(), dst, None, _MS_BIND | _MS_REC)
        if not writable:
            mount(None, dst, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID)

    if libc.unshare(_CLONE_NEWNS) != 0:
        raise RuntimeError(f"unshare(CLONE_NEWNS): errno {ctypes.get_errno()}")
    mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    # the stage's mount as this namespace sees it, held before /tmp (where it may be) is covered
    stage_fd = os.open(stage, os.O_RDONLY | os.O_DIRECTORY)
    mount(b"tmpfs", "/tmp", b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,mode=0755")
    root = "/tmp/root"
    os.mkdir(root, 0o755)
    for name in SYSTEM_DIRS:
        source, target = "/" + name, f"{root}/{name}"
        if os.path.islink(source):  # merged /usr: /bin -> usr/bin
            os.symlink(os.readlink(source), target)
        elif os.path.isdir(source):
            os.mkdir(target)
            bind(source, target)
    os.mkdir(f"{root}/dev", 0o755)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            open(f"{root}/dev/{name}", "wb").close()
            bind(f"/dev/{name}", f"{root}/dev/{name}", writable=True)
    os.mkdir(f"{root}/bot")
    bind(f"/proc/self/fd/{stage_fd}", f"{root}/bot", writable=build)
    os.close(stage_fd)
    if build:
        os.mkdir(f"{root}/tmp", 0o1777)
        mount(b"tmpfs", f"{root}/tmp", b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=64m,mode=1777")
    mount(None, "/tmp", None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, b"size=1m,mode=0755")
    os.chroot(root)
    os.chdir("/bot")


def _die_with_parent(parent: int) -> None:
    """The referee gone, even by ``kill -9``, so is the program: PR_SET_PDEATHSIG (SIGKILL), set after
    the uid change (a change of credentials clears it) and kept across ``execve``; a referee already
    gone by then ends it at once. Without it a killed referee left its programs stopped for ever (a
    program is frozen between turns), holding their memory."""
    from .seccomp import prctl

    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent and os.getppid() != parent:
        os._exit(1)


def main(raw: str) -> None:
    from .harden import ACTIVE, _layer_netns, _layer_uid, _set_no_new_privs
    from .seccomp import Capabilities, PreparedFilter, Unavailable

    cfg = marshal.loads(bytes.fromhex(raw))  # marshal, not json: json's import costs a process ~40 ms
    layers: dict[str, str] = {}
    was_root = os.geteuid() == 0
    build = cfg.get("mode") == "build"
    flt: Any = None
    missing = "disabled by caller (seccomp=False)"
    if cfg["seccomp"] and cfg.get("filter"):  # compiled once by the referee: no pyseccomp here
        flt = PreparedFilter(bytes.fromhex(cfg["filter"]))
    elif cfg["seccomp"]:  # a build: its filter compiled here (it needs no placeholder pid)
        from .program_filter import build_program_filter
        from .seccomp import load_pyseccomp

        sc, missing = load_pyseccomp()
        flt = build_program_filter(sc, os.getpid(), build=build) if sc is not None else None
    caps = Capabilities()

    def step(name: str, fn: Any) -> None:
        try:
            fn()
            layers[name] = ACTIVE
        except Unavailable as exc:
            layers[name] = f"unavailable: {exc}"
        except Exception as exc:  # noqa: BLE001 - every failure is reported, never raised
            layers[name] = f"failed: {type(exc).__name__}: {exc}"

    def workdir() -> None:
        os.chdir(cfg["cwd"])

    def filesystem() -> None:
        _private_root(cfg["cwd"], build)

    def uid() -> None:
        uid = cfg["uid"] + os.getpid()
        if build and was_root:  # the build's copy of the folder becomes its own (it writes there)
            for folder, _dirs, names in os.walk("."):
                os.chown(folder, uid, uid)
                for name in names:
                    os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)
        _layer_uid(uid if was_root else None, os.geteuid(), caps)
        if build:  # a build writes its output in its own folder
            return
        try:  # the stage folder must not be writable by the bot
            fd = os.open(".arena-probe", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            return
        os.close(fd)
        os.unlink(".arena-probe")
        raise RuntimeError("the workdir is writable by the bot's uid")

    def seccomp() -> None:
        if flt is None:
            raise Unavailable(missing)
        flt.load()

    step("workdir", workdir)
    step("filesystem", filesystem)
    step("netns", lambda: _layer_netns(bool(cfg["network"]), was_root))
    step("uid", uid)
    step("rlimits", lambda: _rlimits(cfg))
    step("no_new_privs", _set_no_new_privs)
    _die_with_parent(int(cfg.get("parent", 0)))
    argv = [str(a) for a in cfg["argv"]]
    env = {str(k): str(v) for k, v in cfg["env"].items()}
    # seccomp last: the report is written after it is loaded (a write is allowed).
    step("seccomp", seccomp)
    report = marshal.dumps({"layers": {n: layers.get(n, "failed: not attempted") for n in cfg["order"]}})
    fd = int(cfg["report_fd"])
    os.write(fd, report)
    os.close(fd)
    try:
        os.execve(argv[0], argv, env)
    except OSError as exc:
        sys.stderr.write(f"cannot run {argv[0]}: {exc.strerror}\n")
        os._exit(127)
