"""A Python client of the replay daemon ``az-replay`` (docs/replay.md, docs/protocol.md).

The wire format is the project's control protocol: a DEALER socket sends
``[b"" (delimiter)] [JSON {"cmd", "id", ...}] [binary frame]*`` and the daemon's ROUTER answers
``[b""] [JSON {"ok", "id", ...}] [binary frame]*``. Binary frames use the pinned little-endian
layouts of core/replay/sampling.h (``SAMPLED_SLOT_DTYPE``, 32 bytes; ``PRIORITY_UPDATE_DTYPE``,
24 bytes) and the daemon's records (``record_bytes`` each).

Like ``ipc::Client`` (ipc/client.h) this is a "lazy pirate": each attempt waits ``timeout``
seconds for the reply whose ``id`` it sent; after a timeout the socket is closed and a fresh one
sends again, so a daemon restarted meanwhile answers the next attempt and a late reply to an old
attempt is never mistaken for the current one. Retries make delivery at-least-once, so ``insert``
is sent exactly once (a retry could store the records twice); the other commands are retried.

On tcp:// endpoints every exchange speaks ZeroMQ CURVE with the run's keys
(``<run-dir>/keys/``: client.public, client.secret, server.public; docs/security.md), and a secret
key file that group or others may read is refused, as the C++ side refuses it.

Not thread-safe: one ``ReplayClient`` per thread (ZeroMQ sockets belong to one thread).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import time
from typing import Any, Optional, Sequence

import numpy as np
import zmq
from zmq.utils import z85
from zmq.utils.monitor import parse_monitor_message

from .errors import ReplayError
from .records import unpack

# core/replay/sampling.h: SampledSlot, PriorityUpdate and RecordKey, pinned by static_asserts there.
SAMPLED_SLOT_DTYPE = np.dtype(
    [("slot", "<u8"), ("generation", "<u8"), ("probability", "<f8"), ("weight", "<f8")])
PRIORITY_UPDATE_DTYPE = np.dtype([("slot", "<u8"), ("generation", "<u8"), ("loss", "<f8")])
RECORD_KEY_DTYPE = np.dtype([("slot", "<u8"), ("generation", "<u8")])
assert SAMPLED_SLOT_DTYPE.itemsize == 32 and PRIORITY_UPDATE_DTYPE.itemsize == 24
assert RECORD_KEY_DTYPE.itemsize == 16

# The servers' default request limit (ipc/server.h); larger requests are refused here, before
# sending, as ipc::Client refuses them.
MAX_REQUEST_BYTES = 64 << 20
# What a sample may wait for the daemon's rate limiter when the caller names no timeout (the C++
# ReplayClient's default too). Sent explicitly so that the client knows how long to wait.
DEFAULT_SAMPLE_TIMEOUT_MS = 10_000
# The most slots one `read` may name (services/replay/replay_protocol.h).
MAX_READ_SLOTS = 65536

_MAX_UNIX_SOCKET_PATH = 107  # sizeof(sockaddr_un::sun_path) - 1


# --- Finding the daemon (ipc/endpoint.h, ipc/discovery.h) -------------------------------------


def validate_service_name(service: str) -> None:
    """Raises ValueError unless `service` is 1-32 characters of [a-z0-9_-] starting with a letter
    or digit (ipc::ValidateServiceName)."""
    ok = 1 <= len(service) <= 32 and all(
        c.isascii() and (c.islower() or c.isdigit() or (i > 0 and c in "-_"))
        for i, c in enumerate(service))
    if not ok:
        raise ValueError(f"service name {service!r} must be 1 to 32 characters of a-z, 0-9, '-' "
                         "and '_', starting with a letter or digit")


def normalize_run_dir(run_dir: str) -> str:
    """The absolute run directory with symlinks resolved, as every process of the run computes it
    (ipc::NormalizeRunDir), so that derived endpoint names agree."""
    if not run_dir:
        raise ValueError("the run directory is empty")
    path = os.path.realpath(os.path.abspath(os.fspath(run_dir)))
    return path.rstrip("/") or "/"


def _fnv1a64(data: bytes) -> int:
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def default_control_endpoint(run_dir: str, service: str = "replay") -> str:
    """``ipc://<run-dir>/<service>.ctl``, or, when that path exceeds the 107 bytes of a unix socket
    path, the abstract name ``ipc://@az-<FNV-1a of the run dir, 16 hex>-<service>.ctl`` the
    daemon falls back to (docs/protocol.md, "The 107-byte limit")."""
    validate_service_name(service)
    directory = normalize_run_dir(run_dir)
    path = f"{directory}/{service}.ctl"
    if len(path.encode()) <= _MAX_UNIX_SOCKET_PATH:
        return "ipc://" + path
    return f"ipc://@az-{_fnv1a64(directory.encode()):016x}-{service}.ctl"


def read_service_record(run_dir: str, service: str = "replay") -> Optional[dict]:
    """The discovery record ``<run-dir>/<service>.json`` a service writes when it starts, or None
    when there is none or it is not a version-1 ``az-service`` record."""
    validate_service_name(service)
    try:
        with open(os.path.join(run_dir, service + ".json"), encoding="utf-8") as file:
            record = json.load(file)
    except (OSError, ValueError):
        return None
    if (not isinstance(record, dict) or record.get("kind") != "az-service"
            or record.get("version") != 1):
        return None
    return record


def discover_endpoint(run_dir: str, service: str = "replay") -> str:
    """The control endpoint as azctl finds it: the discovery record's ``control_endpoint`` (which
    holds the port a ``tcp://host:*`` endpoint was bound to), else the default name, which reaches
    the daemon once it starts."""
    record = read_service_record(run_dir, service)
    endpoint = record.get("control_endpoint") if record else None
    if isinstance(endpoint, str) and endpoint:
        return endpoint
    return default_control_endpoint(run_dir, service)


# --- CURVE keys (ipc/curve.h) -----------------------------------------------------------------


def read_key_file(path: str, secret: bool = False) -> bytes:
    """The first non-empty, non-'#' line of a key file: a 40-character Z85 CURVE key.

    Raises ReplayError FAILED_PRECONDITION for a secret file that group or others may read (as ssh
    refuses a private key), NOT_FOUND for a missing file, DATA_LOSS for a file without a valid key.
    """
    try:
        if secret and os.stat(path).st_mode & 0o077:
            raise ReplayError("FAILED_PRECONDITION",
                              f"the secret key {path} may be read by group or others; chmod 600 it")
        with open(path, encoding="ascii", errors="replace") as file:
            lines = file.read().splitlines()
    except FileNotFoundError:
        raise ReplayError("NOT_FOUND", f"{path} does not exist (the daemon makes the run's keys "
                          "when it first binds a tcp:// endpoint)") from None
    except OSError as error:
        raise ReplayError("FAILED_PRECONDITION", f"reading {path}: {error}") from None
    for line in lines:
        line = line.rstrip(" \r")
        if not line or line.startswith("#"):
            continue
        key = line.encode()
        try:
            valid = len(key) == 40 and len(z85.decode(key)) == 32
        except (ValueError, KeyError, IndexError):
            valid = False
        if not valid:
            raise ReplayError("DATA_LOSS", f"{path} does not hold a 40-character Z85 CURVE key")
        return key
    raise ReplayError("DATA_LOSS", f"{path} holds no key")


@dataclasses.dataclass(frozen=True)
class CurveKeys:
    """What a CURVE client needs: its own pair and the public key of the server it trusts."""
    client_public: bytes
    client_secret: bytes
    server_public: bytes

    @classmethod
    def load(cls, keys_dir: str) -> "CurveKeys":
        """Reads client.public, client.secret (refused unless 0600 or stricter) and server.public
        from a run's keys directory or a copy of it. Errors: those of `read_key_file`."""
        return cls(read_key_file(os.path.join(keys_dir, "client.public")),
                   read_key_file(os.path.join(keys_dir, "client.secret"), secret=True),
                   read_key_file(os.path.join(keys_dir, "server.public")))


# --- Replies ----------------------------------------------------------------------------------


@dataclasses.dataclass
class SampledBatch:
    """A prioritized batch: one entry per draw (draws are with replacement).

    ``slots``, ``generations`` (uint64), ``probabilities`` (P(i) at the draw) and ``weights``
    (importance weights (N P(i))^-beta over the batch's largest, so in (0, 1]) are arrays of
    length ``batch``. ``records`` is ``batch x record_bytes`` uint8 (a read-only view of the
    received frame), or None when sampled with ``records=False``; ``unpack(dtype)`` views them
    as structured records. ``body`` is the daemon's JSON reply (size, waited_ms, prefetched, ...).
    Echo ``slots`` and ``generations`` in ``update_priorities``.
    """
    slots: np.ndarray
    generations: np.ndarray
    probabilities: np.ndarray
    weights: np.ndarray
    records: Optional[np.ndarray]
    body: dict

    def __len__(self) -> int:
        return len(self.slots)

    def unpack(self, dtype: np.dtype) -> np.ndarray:
        """The records as an owned array of the structured `dtype` (records.unpack)."""
        if self.records is None:
            raise ValueError("the batch was sampled without records")
        return unpack(self.records, dtype)


@dataclasses.dataclass
class ReadResult:
    """The records of a `read`: ``found`` (bool) says which slots hold a record; ``generations``
    (uint64, 0 where empty), ``priorities`` (float64, NaN where empty) and ``records``
    (``n x record_bytes`` uint8, zeros where empty) follow the order of the slots asked for."""
    found: np.ndarray
    generations: np.ndarray
    priorities: np.ndarray
    records: np.ndarray


# --- The client -------------------------------------------------------------------------------


class ReplayClient:
    """Talks to one replay daemon.

    Where: ``endpoint`` if given, else the run directory's discovery record (re-read whenever a
    fresh socket is opened, so a daemon restarted on another tcp port is found again), else
    ``ipc://<run-dir>/<service>.ctl``. tcp:// endpoints need CURVE keys: ``keys_dir`` (default
    ``<run-dir>/keys``), or ValueError when there is neither.

    Every call blocks up to ``attempts x timeout`` seconds (``sample`` adds its own wait for the
    rate limiter to each attempt; ``insert`` makes one attempt) and raises ReplayError with the
    daemon's code and message when it answers an error, DEADLINE_EXCEEDED when no attempt got a
    reply, UNAVAILABLE when the connection dropped during the last attempt (the request may have
    been carried out), PERMISSION_DENIED when a CURVE server refused this client's key.
    """

    def __init__(self, run_dir: Optional[str] = None, endpoint: Optional[str] = None, *,
                 service: str = "replay", timeout: float = 5.0, attempts: int = 3,
                 keys_dir: Optional[str] = None, context: Optional[zmq.Context] = None):
        if not run_dir and not endpoint:
            raise ValueError("ReplayClient needs a run directory or an endpoint")
        if not timeout > 0 or attempts < 1:
            raise ValueError(f"timeout must be > 0 and attempts >= 1, got {timeout}, {attempts}")
        validate_service_name(service)
        self._run_dir = run_dir
        self._explicit_endpoint = endpoint
        self._service = service
        self._keys_dir = keys_dir or (os.path.join(run_dir, "keys") if run_dir else None)
        self.timeout = float(timeout)
        self.attempts = int(attempts)
        self._context = context or zmq.Context.instance()
        self._socket: Optional[zmq.Socket] = None
        self._monitor: Optional[zmq.Socket] = None
        self._endpoint = ""
        self._ids = itertools.count(1)
        self._record_bytes: Optional[int] = None
        # Fail now, not at the first call, for a tcp:// endpoint without keys.
        self._keys_for(self.endpoint)

    # -- lifetime --

    def close(self) -> None:
        """Closes the socket (pending requests are dropped). The client may be used again."""
        if self._socket is not None:
            self._socket.disable_monitor()
            self._monitor.close(linger=0)
            self._socket.close(linger=0)
        self._socket = self._monitor = None

    def __enter__(self) -> "ReplayClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def endpoint(self) -> str:
        """The endpoint the next fresh socket connects to."""
        if self._explicit_endpoint:
            return self._explicit_endpoint
        return discover_endpoint(self._run_dir, self._service)

    # -- the daemon's commands --

    def status(self) -> dict:
        """The daemon's status object (size, capacity, record_bytes, record_layout, alpha,
        epsilon, counters, rate limiter, ...: docs/replay.md, "Commands")."""
        body, _ = self.call("status")
        if isinstance(body.get("record_bytes"), int):
            self._record_bytes = body["record_bytes"]
        return body

    @property
    def record_bytes(self) -> int:
        """The daemon's record size (asked once with `status`, then remembered)."""
        if self._record_bytes is None:
            self.status()
        return self._record_bytes

    def insert(self, records: Any) -> np.ndarray:
        """Stores records and returns their generations (uint64, in order; the slot of a record is
        its generation modulo the capacity) once the daemon has committed them.

        `records`: a structured array (one element per record), a 2-D uint8 array (one row per
        record) or bytes. Sizes are checked by the daemon, not here: a frame that is not a whole
        number of records, or whose count differs from the array's length, is refused with
        INVALID_ARGUMENT and nothing is stored (all or nothing). Sent once, never retried: after
        DEADLINE_EXCEEDED or UNAVAILABLE the records may or may not be in.
        """
        frame, count = _records_frame(records)
        args = {} if count is None else {"count": count}
        _, frames = self.call("insert", frames=[frame], attempts=1, **args)
        if len(frames) != 1:
            raise ReplayError("DATA_LOSS", f"insert reply has {len(frames)} frames, expected 1")
        return _frame_array(frames[0], np.dtype("<u8"), "insert generations")

    def sample(self, batch: int, beta: float, timeout_ms: Optional[int] = None, *,
               records: bool = True, model_version: Optional[int] = None) -> SampledBatch:
        """Draws `batch` records in proportion to their priorities, with importance weights for
        `beta` in [0, 1].

        The daemon's rate limiter may hold the request up to `timeout_ms` (default
        DEFAULT_SAMPLE_TIMEOUT_MS) and then answers DEADLINE_EXCEEDED with its state; each attempt
        waits that much longer than the client's timeout. FAILED_PRECONDITION: a batch the
        limiter can never serve; INVALID_ARGUMENT: batch beyond max-batch, beta outside [0, 1].
        A batch the daemon drew ahead (prefetch) may predate the latest priority updates.
        """
        if timeout_ms is None:
            timeout_ms = DEFAULT_SAMPLE_TIMEOUT_MS
        args = {"batch": int(batch), "beta": float(beta), "timeout_ms": int(timeout_ms),
                "records": bool(records)}
        if model_version is not None:
            args["model_version"] = int(model_version)
        body, frames = self.call("sample", timeout=self.timeout + max(0, timeout_ms) / 1000,
                                 **args)
        if len(frames) != (2 if records else 1):
            raise ReplayError("DATA_LOSS", f"sample reply has {len(frames)} frames")
        draws = _frame_array(frames[0], SAMPLED_SLOT_DTYPE, "sampled slots")
        raw = None
        if records:
            record_bytes = body.get("record_bytes")
            raw = np.frombuffer(frames[1].buffer, dtype=np.uint8)
            if not isinstance(record_bytes, int) or raw.size != len(draws) * record_bytes:
                raise ReplayError("DATA_LOSS", f"sample reply: {raw.size} record bytes for "
                                  f"{len(draws)} draws of {record_bytes} bytes")
            raw = raw.reshape(len(draws), record_bytes)
            self._record_bytes = record_bytes
        return SampledBatch(draws["slot"], draws["generation"], draws["probability"],
                            draws["weight"], raw, body)

    def update_priorities(self, slots: Sequence[int], generations: Sequence[int],
                          losses: Sequence[float]) -> dict:
        """Sets each record's priority from its loss: the daemon stores (loss + epsilon)^alpha,
        for the slots that still hold the given generation. Returns the counts ``applied``,
        ``stale`` (overwritten since drawn) and ``rejected`` (NaN, infinite or negative loss, slot
        out of range). Idempotent, so retried. ValueError for arrays of different lengths."""
        slots = np.asarray(slots, dtype=np.uint64).ravel()
        generations = np.asarray(generations, dtype=np.uint64).ravel()
        losses = np.asarray(losses, dtype=np.float64).ravel()
        if not len(slots) == len(generations) == len(losses):
            raise ValueError(f"slots, generations and losses differ in length: {len(slots)}, "
                             f"{len(generations)}, {len(losses)}")
        updates = np.empty(len(slots), dtype=PRIORITY_UPDATE_DTYPE)
        updates["slot"], updates["generation"], updates["loss"] = slots, generations, losses
        body, _ = self.call("update-priorities", frames=[updates.tobytes()])
        return {key: body.get(key) for key in ("applied", "stale", "rejected")}

    def withdraw(self, slots: Sequence[int], generations: Sequence[int]) -> dict:
        """Withdraws records the caller cannot use (malformed): the daemon never draws them again
        until they are overwritten, with prioritized or uniform sampling (where no priority could
        do it). Returns the counts ``withdrawn``, ``stale`` (overwritten since drawn) and
        ``rejected`` (slot out of range). Idempotent, so retried. ValueError for arrays of
        different lengths."""
        slots = np.asarray(slots, dtype=np.uint64).ravel()
        generations = np.asarray(generations, dtype=np.uint64).ravel()
        if len(slots) != len(generations):
            raise ValueError(f"slots and generations differ in length: {len(slots)}, "
                             f"{len(generations)}")
        keys = np.empty(len(slots), dtype=RECORD_KEY_DTYPE)
        keys["slot"], keys["generation"] = slots, generations
        body, _ = self.call("withdraw", frames=[keys.tobytes()])
        return {key: body.get(key) for key in ("withdrawn", "stale", "rejected")}

    def read(self, slots: Sequence[int]) -> ReadResult:
        """The records in `slots` (1 to 65536 of them) with their generations and priorities.
        INVALID_ARGUMENT for a slot beyond the capacity."""
        slots = [int(s) for s in np.asarray(slots, dtype=np.uint64).ravel()]
        body, frames = self.call("read", slots=slots)
        record_bytes = body.get("record_bytes")
        if len(frames) != 1 or not isinstance(record_bytes, int):
            raise ReplayError("DATA_LOSS", "read reply without its records frame")
        records = np.frombuffer(frames[0].buffer, dtype=np.uint8)
        if records.size != len(slots) * record_bytes:
            raise ReplayError("DATA_LOSS", f"read reply holds {records.size} bytes for "
                              f"{len(slots)} records of {record_bytes} bytes")
        generations = body.get("generations") or []
        priorities = body.get("priorities") or []
        found = np.array([g is not None for g in generations], dtype=bool)
        return ReadResult(found,
                          np.array([g or 0 for g in generations], dtype=np.uint64),
                          np.array([np.nan if p is None else p for p in priorities], np.float64),
                          records.reshape(len(slots), record_bytes))

    def set(self, key: str, value: Any) -> dict:
        """Changes a run-time setting (samples_per_insert, prefetch, ...); returns
        {key, value, previous}."""
        body, _ = self.call("set", key=key, value=value)
        return body

    def snapshot(self, timeout: float = 600.0) -> dict:
        """Writes a snapshot and waits up to `timeout` seconds for it to be on disk."""
        body, _ = self.call("snapshot", timeout=timeout, attempts=1)
        return body

    # -- the transport --

    def call(self, cmd: str, frames: Sequence[Any] = (), *, timeout: Optional[float] = None,
             attempts: Optional[int] = None, **args) -> tuple[dict, list]:
        """Sends ``{"cmd": cmd, **args}`` with binary `frames` (bytes or buffers) and returns the
        reply's JSON object and its frames (zmq.Frame; ``.buffer`` is a memoryview) when it says
        ``ok``. Raises ReplayError as the class says."""
        timeout = self.timeout if timeout is None else float(timeout)
        attempts = self.attempts if attempts is None else int(attempts)
        frames = [memoryview(f).cast("B") if not isinstance(f, bytes) else f for f in frames]
        size = sum(len(f) for f in frames)
        if size > MAX_REQUEST_BYTES:
            raise ReplayError("RESOURCE_EXHAUSTED", f"request '{cmd}' of {size} bytes exceeds the "
                              f"limit of {MAX_REQUEST_BYTES} bytes")
        for attempt in range(1, attempts + 1):
            if self._socket is None:
                self._open()
            request_id = next(self._ids)
            text = json.dumps({"cmd": cmd, "id": request_id, **args}).encode()
            self._drain_monitor()  # connections lost before this request are not its business
            self._socket.send_multipart([b"", text, *frames], copy=False)
            try:
                reply, dropped = self._await_reply(request_id, time.monotonic() + timeout)
            except ReplayError:
                self.close()  # a refused key or a broken peer: the next call starts afresh
                raise
            if reply is not None:
                return _checked_reply(reply, cmd)
            # No reply: a fresh socket drops whatever the old one had queued for a dead connection,
            # and a late reply to this attempt goes to the old identity, never to the next one.
            endpoint = self._endpoint
            self.close()
            if dropped and attempt == attempts:
                raise ReplayError("UNAVAILABLE", f"the connection to {endpoint} dropped while "
                                  f"waiting for the reply to '{cmd}' (the daemon died or is "
                                  "restarting); it may or may not have been carried out")
        hint = ""
        if endpoint.startswith("ipc:///") and not os.path.exists(endpoint[len("ipc://"):]):
            hint = f" (no socket at {endpoint[len('ipc://'):]}: is the daemon running?)"
        raise ReplayError("DEADLINE_EXCEEDED", f"no reply to '{cmd}' from {endpoint} after "
                          f"{attempts} attempt(s) of {timeout:g} s{hint}")

    def _keys_for(self, endpoint: str) -> Optional[CurveKeys]:
        if not endpoint.startswith("tcp://"):
            return None
        if not self._keys_dir:
            raise ValueError(f"{endpoint} speaks CURVE: give a run directory or keys_dir holding "
                             "client.public, client.secret and server.public")
        return CurveKeys.load(self._keys_dir)

    def _open(self) -> None:
        endpoint = self.endpoint
        keys = self._keys_for(endpoint)
        socket = self._context.socket(zmq.DEALER)
        socket.linger = 0
        if keys is not None:
            socket.curve_publickey = keys.client_public
            socket.curve_secretkey = keys.client_secret
            socket.curve_serverkey = keys.server_public
        # Watch the connections: a drop ends the wait early, a refused key ends it with the reason.
        self._monitor = socket.get_monitor_socket(
            zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_SUCCEEDED
            | zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
            | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL)
        socket.connect(endpoint)
        self._socket, self._endpoint, self._curve = socket, endpoint, keys is not None
        self._live = False  # the current connection completed its handshake
        self._connections = self._handshakes = self._failed_handshakes = 0

    def _drain_monitor(self) -> tuple[int, Optional[int]]:
        """Reads the socket's connection events; returns how many handshaked connections dropped
        and the ZAP status of a refused CURVE handshake, if any."""
        dropped, refused = 0, None
        while self._monitor.poll(0):
            event = parse_monitor_message(self._monitor.recv_multipart())
            kind = event["event"]
            if kind == zmq.EVENT_CONNECTED:
                self._connections += 1
            elif kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self._handshakes += 1
                self._live = True
            elif kind == zmq.EVENT_DISCONNECTED:
                dropped += self._live
                self._live = False
            elif kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                refused = event["value"]
            else:
                self._failed_handshakes += 1
        return dropped, refused

    def _await_reply(self, request_id: int, deadline: float) -> tuple[Optional[list], bool]:
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        poller.register(self._monitor, zmq.POLLIN)
        while (remaining := deadline - time.monotonic()) > 0:
            ready = dict(poller.poll(remaining * 1000))
            if self._monitor in ready:
                dropped, refused = self._drain_monitor()
                if refused is not None:  # retrying will not change the server's mind
                    raise ReplayError(
                        "PERMISSION_DENIED", f"the server at {self._endpoint} refused this "
                        f"client's CURVE key (ZAP status {refused}): add the client's public key "
                        f"({self._keys_dir}/client.public) to the server's keys/authorized_clients "
                        "and restart the server")
                if dropped and self._socket not in ready:
                    return None, True  # the request went down with the connection
            if self._socket in ready:
                parts = self._socket.recv_multipart(copy=False)
                if len(parts) < 2 or len(parts[0]) != 0:
                    continue  # not a protocol reply (no delimiter): ignore, as ipc::Client does
                try:
                    body = json.loads(parts[1].bytes)
                except ValueError:
                    body = None
                if not isinstance(body, dict):
                    raise ReplayError("DATA_LOSS", f"a reply from {self._endpoint} is not a JSON "
                                      "object")
                if body.get("id") != request_id:
                    continue  # a late reply to an earlier request
                return [body, *parts[2:]], False
        # Connections were made but no CURVE handshake completed: a wrong server key or a server
        # without CURVE. Two at least: one dropped mid-handshake may be a daemon dying.
        self._drain_monitor()
        if self._curve and self._handshakes == 0 and self._connections >= 2:
            raise ReplayError(
                "PERMISSION_DENIED", f"connected to {self._endpoint} {self._connections} time(s) "
                f"({self._failed_handshakes} handshake failure(s) seen) but no CURVE handshake "
                f"completed: {self._keys_dir}/server.public is not that server's key, or the "
                "server does not speak CURVE")
        return None, False


def _checked_reply(reply: list, cmd: str) -> tuple[dict, list]:
    body, frames = reply[0], reply[1:]
    if body.get("ok") is True:
        return body, frames
    error = body.get("error")
    if body.get("ok") is False and isinstance(error, dict):
        raise ReplayError(str(error.get("code", "UNKNOWN")), str(error.get("message", "")))
    raise ReplayError("DATA_LOSS", f"reply to '{cmd}' is not a protocol reply: {body}")


def _frame_array(frame: zmq.Frame, dtype: np.dtype, what: str) -> np.ndarray:
    """A received frame as an owned, aligned array: libzmq receives small messages inside a shared
    buffer at any offset, so the frame's bytes may be misaligned for `dtype`."""
    data = frame.buffer
    if len(data) % dtype.itemsize:
        raise ReplayError("DATA_LOSS", f"{what}: frame of {len(data)} bytes is not a whole number "
                          f"of {dtype.itemsize}-byte elements")
    return np.frombuffer(data, dtype=dtype).copy()


def _records_frame(records: Any) -> tuple[Any, Optional[int]]:
    """The bytes of `records` for an insert frame, and the count the daemon should check (None
    when the input does not say how many records it holds)."""
    if isinstance(records, (bytes, bytearray, memoryview)):
        return bytes(records), None
    array = np.ascontiguousarray(records)
    if array.dtype.hasobject:
        raise ValueError("records must be plain bytes (no object fields)")
    if array.dtype.names is not None:
        count = array.size  # one record per element of a structured array
    elif array.dtype == np.uint8 and array.ndim == 2:
        count = array.shape[0]  # one record per row
    else:
        raise ValueError("records must be a structured array, a 2-D uint8 array (a row per "
                         f"record) or bytes, got {array.dtype} of shape {array.shape}")
    return array.reshape(-1).view(np.uint8), count
