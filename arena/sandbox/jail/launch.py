"""The launcher of a bot program (a ``.js`` file, a ``bot.toml`` folder) or of a build.

Run by the referee (:mod:`arena.sandbox.programs.process`, :mod:`arena.sandbox.programs.build`) as
``python -I -c ... CONFIG`` in a new session, as root when the referee is. It is two processes:

* the **supervisor** (the process the referee started): dies with the referee
  (``PR_SET_PDEATHSIG``), takes the layers a child inherits (the working directory, a root of
  its own, an empty network namespace, a new PID namespace), forks the **program** and waits
  for it. The program is the first process (pid 1) of its PID namespace: when it ends, the
  kernel kills every other process of the namespace and lets the program's end be seen only
  once they are all gone, so nothing the program or a build started outlives it, whatever
  process group or session it made. The supervisor holds the uid's lease
  (:mod:`arena.sandbox.jail.uids`) until then and exits with the program's status.
* the **program**: takes its own uid, rlimits, no_new_privs, the death signal of its
  supervisor, the seccomp filter, writes its layers report to the supervisor (so the program
  it execs cannot forge it: the pipe is closed before the exec), and execs the program (or
  ``/bin/sh -c BUILD``) with a near-empty environment.

The supervisor relays the report with the program's pid (as the referee sees it) and a pidfd
of it (SCM_RIGHTS on the report socket): the referee signals the program through that pidfd
and times it on its CPU clock, never the supervisor. In
build mode it receives the bot's files on its stdin, writes them into the build's folder (a
bounded tmpfs, :mod:`arena.sandbox.jail.buildfs`), and, once the build and its whole namespace are
gone, reads the folder back and sends the files on the report pipe.

The layers, fitted to a program (those of a Python bot's game process, and more):

``workdir``     chdir into the bot's stage folder (its own files only, owned by root, mode
                0555: read-only to the bot's uid); a build's: its folder, a tmpfs.
``filesystem``  a mount namespace and a root of its own (:func:`_private_root`).
``netns``       a new, empty network namespace.
``pidns``       a new PID namespace whose first process is the program.
``uid``         its own unprivileged uid and gid (leased), no groups, no capabilities.
``rlimits``     RLIMIT_DATA (not RLIMIT_AS: V8 reserves far more address space than it uses
                and dies at start under a 512 MB RLIMIT_AS), RLIMIT_FSIZE, RLIMIT_CORE 0,
                RLIMIT_CPU (a backstop), RLIMIT_NOFILE, RLIMIT_NPROC (the uid is its own).
``no_new_privs`` and not dumpable.
``seccomp``     the program allowlist, or the build's (:mod:`arena.sandbox.jail.program_filter`).

Nothing is imported after the layers are in force but what the exec needs.
"""

from __future__ import annotations

import _socket  # the C module only (socket.py adds selectors, select...): imported before the root changes
import marshal
import os
import resource
import signal
import struct
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1
#: A frame on the report pipe: its length, then marshal.
FRAME = struct.Struct("<I")


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
_CLONE_NEWPID = 0x20000000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000


#: What a program sees of the machine's files (read-only), besides its own folder as ``/bot``.
SYSTEM_DIRS = ("usr", "etc", "bin", "lib", "lib64", "sbin")
DEVICES = ("null", "zero", "urandom", "random")
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 0x1, 0x2, 0x4, 0x20, 0x1000


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _private_root(stage: str | None, build: dict[str, Any] | None = None) -> int | None:
    """A new mount namespace and root: the system's folders read-only, a few devices, the
    bot's own folder as ``/bot`` (read-only), and nothing else: no /tmp, /proc, /home, /root,
    /srv or wherever the organiser keeps databases, records and the other bots.

    ``build``: the build's ``/bot`` is a tmpfs of its own (``size``/``inodes``, its root owned
    by ``uid``) and its ``/tmp`` another (``scratch``/``scratch_inodes``); the descriptor of
    ``/bot`` is returned (the launcher fills it before, and reads it after, the build)."""
    import ctypes

    libc = _libc()

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
    stage_fd = os.open(stage, os.O_RDONLY | os.O_DIRECTORY) if stage is not None else -1
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
    bot_fd = None
    if build is None:
        bind(f"/proc/self/fd/{stage_fd}", f"{root}/bot")
        os.close(stage_fd)
    else:
        from .buildfs import mount_options  # a build's only: a program's start imports nothing more

        uid = build.get("uid")
        flags = _MS_NOSUID | _MS_NODEV
        mount(b"tmpfs", f"{root}/bot", b"tmpfs", flags, mount_options(build["size"], build["inodes"], uid, 0o755))
        os.mkdir(f"{root}/tmp", 0o1777)
        scratch = mount_options(build["scratch"], build["scratch_inodes"], None, 0o1777)
        mount(b"tmpfs", f"{root}/tmp", b"tmpfs", flags, scratch)
        bot_fd = os.open(f"{root}/bot", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    mount(None, "/tmp", None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, b"size=1m,mode=0755")
    os.chroot(root)
    os.chdir("/bot")
    return bot_fd


def _die_with_parent(parent: int) -> None:
    """The referee gone, even by ``kill -9``, so is the supervisor (and so the program, whose
    death signal is the supervisor's end): PR_SET_PDEATHSIG (SIGKILL), kept across ``execve``; a
    referee already gone by then ends it at once. Without it a killed referee left its programs
    stopped for ever (a program is frozen between turns), holding their memory."""
    from .seccomp import prctl

    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent and os.getppid() != parent:
        os._exit(1)


def write_frame(fd: int, message: Any) -> None:
    """One frame on the report pipe (:data:`FRAME`), written whole."""
    payload = marshal.dumps(message)
    data = memoryview(FRAME.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def main(raw: str) -> None:
    """The supervisor: its own safety, the inherited layers, the fork, the wait."""
    from .harden import ACTIVE
    from .seccomp import _PR_SET_DUMPABLE, Capabilities, PreparedFilter, Unavailable, prctl

    cfg = marshal.loads(bytes.fromhex(raw))  # marshal, not json: json's import costs a process ~40 ms
    build = cfg.get("mode") == "build"
    _die_with_parent(int(cfg.get("parent", 0)))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # it may end by the program's signal: no core
    prctl(_PR_SET_DUMPABLE, 0)
    files = None
    if build:
        from .buildfs import read_input

        files = read_input(0)
    layers: dict[str, str] = {}
    was_root = os.geteuid() == 0
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
    uid = cfg.get("uid") if was_root else None
    folder: dict[str, int | None] = {"bot": None}

    def step(name: str, fn: Any) -> None:
        try:
            fn()
            layers[name] = ACTIVE
        except Unavailable as exc:
            layers[name] = f"unavailable: {exc}"
        except Exception as exc:  # noqa: BLE001 - every failure is reported, never raised
            layers[name] = f"failed: {type(exc).__name__}: {exc}"

    def filesystem() -> None:
        spec: dict[str, Any] | None = None
        if build:
            spec = {k: int(cfg[k]) for k in ("size", "inodes", "scratch", "scratch_inodes")}
            spec["uid"] = uid
        folder["bot"] = _private_root(None if build else cfg["cwd"], spec)

    def workdir() -> None:
        if not build:
            os.chdir(cfg["cwd"])
            return
        bot = folder["bot"]
        if bot is None:
            raise RuntimeError("the build's folder was not made")
        from .buildfs import populate

        populate(bot, files or {}, uid)
        os.fchdir(bot)

    def pidns() -> None:
        import ctypes

        from .seccomp import errname

        if _libc().unshare(_CLONE_NEWPID) != 0:
            raise Unavailable(f"unshare(CLONE_NEWPID): {errname(ctypes.get_errno())}")

    def netns() -> None:
        from .harden import _layer_netns

        _layer_netns(bool(cfg["network"]), was_root)

    if build:
        step("filesystem", filesystem)
        step("workdir", workdir)
    else:
        step("workdir", workdir)
        step("filesystem", filesystem)
    step("netns", netns)
    step("pidns", pidns)
    report_fd = int(cfg["report_fd"])
    mine, theirs = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(mine)
        _program(cfg, layers, flt, missing, caps, uid, theirs)
    os.close(theirs)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):  # the program's pipes are its own: their ends are seen as its end
        os.dup2(null, fd)
    os.close(null)
    got = b""
    while len(got) < 65536:
        chunk = os.read(mine, 65536)
        if not chunk:
            break
        got += chunk
    os.close(mine)
    try:
        theirs_said = marshal.loads(got)["layers"]
    except (ValueError, EOFError, KeyError, TypeError):
        theirs_said = {}
    try:
        _send_report(report_fd, {"pid": pid, "layers": theirs_said}, pid)
    except OSError:  # the referee is gone
        os.kill(pid, signal.SIGKILL)
    status = _wait(pid)
    if build:
        _deliver(report_fd, folder["bot"], status, cfg)
    os.close(report_fd)
    try:  # reaped last: nothing of its uid is left, not even a zombie, when this process ends
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    _mirror(status)


def _send_report(fd: int, message: Any, pid: int) -> None:
    """The first frame, with a pidfd of the program (SCM_RIGHTS): opened here, by its parent,
    before it can have been reaped, so it names the program and no process that reused its pid.
    Without pidfds (an old kernel) the frame goes alone, and the referee signals this process's
    group."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        write_frame(fd, message)
        return
    payload = marshal.dumps(message)
    sock = _socket.socket(fileno=fd)
    try:
        ancillary = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("i", pidfd))]
        sent = sock.sendmsg([FRAME.pack(len(payload)) + payload], ancillary)
    finally:
        sock.detach()
        os.close(pidfd)
    rest = memoryview(FRAME.pack(len(payload)) + payload)[sent:]
    while rest:
        rest = rest[os.write(fd, rest) :]


def _wait(pid: int) -> tuple[int, int]:
    """How the program ended, once it has (its namespace empty): (si_code, si_status). It is
    reaped only as this process ends (a build's folder is read first)."""
    while True:
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        except InterruptedError:
            continue
        except ChildProcessError:
            return os.CLD_EXITED, 127
        if info is not None:
            return info.si_code, info.si_status


def _deliver(report_fd: int, bot: int | None, status: tuple[int, int], cfg: dict[str, Any]) -> None:
    """The build's result, after the build and its whole namespace are gone: its status, whether
    it filled its folder or its /tmp, and (when it succeeded) the folder's files."""
    from .buildfs import collect, filled

    result: dict[str, Any] = {"status": list(status)}
    if bot is not None:
        result["full"] = filled(bot)
        try:
            scratch = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # its /tmp, in this root
            result["scratch_full"] = filled(scratch)
            os.close(scratch)
        except OSError:
            pass
        if status == (os.CLD_EXITED, 0) and not result["full"]:
            result.update(collect(bot, int(cfg["folder_files"]), int(cfg["folder_bytes"])))
    try:
        write_frame(report_fd, result)
    except OSError:
        pass


def _mirror(status: tuple[int, int]) -> None:
    """End as the program did: its exit status, or its signal (with no core)."""
    code, value = status
    if code in (os.CLD_KILLED, os.CLD_DUMPED):
        for undo in (
            lambda: signal.signal(value, signal.SIG_DFL),
            lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, [value]),
        ):
            try:
                undo()
            except (OSError, ValueError):  # SIGKILL has no handler to reset
                pass
        os.kill(os.getpid(), value)
        os._exit(128 + value)
    os._exit(value)


def _program(
    cfg: dict[str, Any], layers: dict[str, str], flt: Any, missing: str, caps: Any, uid: int | None, report: int
) -> None:
    """The forked program (pid 1 of its namespace): its own layers, its report, the exec."""
    from .harden import ACTIVE, _layer_uid, _set_no_new_privs
    from .seccomp import Unavailable, prctl

    build = cfg.get("mode") == "build"

    def step(name: str, fn: Any) -> None:
        try:
            fn()
            layers[name] = ACTIVE
        except Unavailable as exc:
            layers[name] = f"unavailable: {exc}"
        except Exception as exc:  # noqa: BLE001 - every failure is reported, never raised
            layers[name] = f"failed: {type(exc).__name__}: {exc}"

    def drop() -> None:
        _layer_uid(uid, os.geteuid(), caps)
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

    try:
        if layers.get("pidns") == ACTIVE and os.getpid() != 1:
            layers["pidns"] = f"failed: the program is pid {os.getpid()} of its namespace, not 1"
        step("uid", drop)
        step("rlimits", lambda: _rlimits(cfg))
        step("no_new_privs", _set_no_new_privs)
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid change, which clears it
        argv = [str(a) for a in cfg["argv"]]
        env = {str(k): str(v) for k, v in cfg["env"].items()}
        os.closerange(3, report)  # only its stdio and the report pipe: no lease, no folder
        os.closerange(report + 1, 1 << 16)
        # seccomp last: the report is written after it is loaded (a write is allowed).
        step("seccomp", seccomp)
        said = marshal.dumps({"layers": {n: layers.get(n, "failed: not attempted") for n in cfg["order"]}})
        os.write(report, said)  # the supervisor gone (EPIPE) before the death signal took: end
        os.close(report)
    except BaseException:  # noqa: BLE001 - never back into the supervisor's code
        os._exit(126)
    try:
        os.execve(argv[0], argv, env)
    except OSError as exc:
        sys.stderr.write(f"cannot run {argv[0]}: {exc.strerror}\n")
    os._exit(127)
