#!/usr/bin/env python3
"""python/az_replay against the real az-replay binary (integration).

Each test starts the daemon in a temporary run directory of its own, with the opaque "bytes"
record layout, a small capacity and a shared-memory scope of its own (the sample ring; removed at
the end), and stops it with SIGTERM in tearDown, expecting a clean exit. The binary comes from
$AZ_REPLAY_BINARY (ctest passes $<TARGET_FILE:az-replay>), else build/bin/az-replay.

pyzmq and numpy are required, not optional (scripts/packages.txt installs python3-zmq and
python3-numpy): a missing module fails the test.
"""

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np
import zmq

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from az_replay import (NStepWriter, ReplayClient, ReplayError,  # noqa: E402
                       default_control_endpoint, priorities_from_td, transition_dtype, unpack)

AZ_REPLAY = os.environ.get("AZ_REPLAY_BINARY") or os.path.join(REPO, "build", "bin", "az-replay")
_counter = itertools.count()


def id_records(first_id: int, count: int, record_bytes: int) -> np.ndarray:
    """`count` records that carry their id in the first 8 bytes and a pattern made from it in the
    rest, so a record is recognised, and a torn or mixed one is not (as replay_test_util.h)."""
    ids = np.arange(first_id, first_id + count, dtype=np.uint64)
    out = np.empty((count, record_bytes), dtype=np.uint8)
    out[:, :8] = ids.astype("<u8").view(np.uint8).reshape(count, 8)
    columns = np.arange(8, record_bytes, dtype=np.uint64)
    out[:, 8:] = ((ids[:, None] * 131 + columns[None, :] * 7) & 0xFF).astype(np.uint8)
    return out


class Daemon:
    """The real az-replay as a child process; its log is <run-dir>/replay-<n>.log."""

    def __init__(self, run_dir: str, record_bytes: int, capacity: int, *extra: str):
        self.run_dir = run_dir
        self.shm_prefix = f"azpy-{os.getpid()}-{next(_counter)}"
        self.log_path = os.path.join(run_dir, f"replay-{next(_counter)}.log")
        self.expect_clean_exit = True
        argv = [AZ_REPLAY, "--run-dir", run_dir, "--record-layout", "bytes",
                "--record-bytes", str(record_bytes), "--capacity", str(capacity),
                "--shm-scope", "shm:" + self.shm_prefix, "--metrics-port", "-1",
                "--model-events-from", "", "--log-interval", "0",
                # No batch drawn ahead: a sample after an update sees the new priorities.
                "--prefetch", "false", *extra]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)

    def log(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as file:
            return file.read()

    def wait_ready(self, limit: float = 30.0) -> None:
        """Returns once the daemon answers `status`; fails when it exits first or never answers."""
        probe = ReplayClient(run_dir=self.run_dir, timeout=0.2, attempts=1)
        deadline = time.monotonic() + limit
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise AssertionError(f"az-replay exited with {self.process.returncode}:\n"
                                         + self.log())
                try:
                    probe.status()
                    return
                except ReplayError as error:
                    if error.code not in ("DEADLINE_EXCEEDED", "UNAVAILABLE"):
                        raise
            raise AssertionError(f"az-replay did not answer within {limit} s:\n" + self.log())
        finally:
            probe.close()

    def stop(self) -> int:
        """SIGTERM, then its exit code (SIGKILL after 20 s). Removes its shared-memory segments,
        which outlive it on purpose (the ring's records were acknowledged to producers)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for name in os.listdir("/dev/shm"):
            if name.startswith(self.shm_prefix + "."):
                os.unlink(os.path.join("/dev/shm", name))
        return self.process.returncode


class PythonReplayClientTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="azpy-")
        self.daemons = []
        self.clients = []

    def tearDown(self):
        for client in self.clients:
            client.close()
        failures = []
        for daemon in self.daemons:
            code = daemon.stop()
            if daemon.expect_clean_exit and code != 0:
                failures.append(f"az-replay exited with {code}:\n{daemon.log()}")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.assertEqual(failures, [])

    def start(self, record_bytes=16, capacity=64, *extra, run_dir=None, **client_options):
        """A ready daemon and a client of it, both cleaned up by tearDown."""
        run_dir = run_dir or self.dir
        daemon = Daemon(run_dir, record_bytes, capacity, *extra)
        self.daemons.append(daemon)
        daemon.wait_ready()
        return daemon, self.client(run_dir=run_dir, **client_options)

    def client(self, **options):
        options.setdefault("timeout", 10.0)
        client = ReplayClient(**options)
        self.clients.append(client)
        return client

    # --- the commands ---

    def test_insert_then_status_reports_the_size(self):
        _, client = self.start(16, 64)
        generations = client.insert(id_records(0, 10, 16))
        np.testing.assert_array_equal(generations, np.arange(10, dtype=np.uint64))
        status = client.status()
        self.assertEqual(status["size"], 10)
        self.assertEqual(status["capacity"], 64)
        self.assertEqual(status["record_bytes"], 16)
        self.assertEqual(status["record_layout"], "bytes")
        self.assertEqual(status["inserted_control"], 10)
        self.assertEqual(client.record_bytes, 16)
        # Past the capacity the oldest are overwritten; generations keep counting.
        generations = client.insert(id_records(10, 60, 16))
        np.testing.assert_array_equal(generations, np.arange(10, 70, dtype=np.uint64))
        status = client.status()
        self.assertEqual(status["size"], 64)
        self.assertEqual(status["generations_issued"], 70)

    def test_sample_gives_weights_in_0_1_and_the_inserted_bytes(self):
        _, client = self.start(16, 64)
        inserted = id_records(0, 40, 16)
        generations = client.insert(inserted)
        counts = client.update_priorities(generations % 64, generations, np.arange(1.0, 41.0))
        self.assertEqual(counts, {"applied": 40, "stale": 0, "rejected": 0})

        batch = client.sample(256, beta=0.7)
        self.assertEqual(len(batch), 256)
        self.assertTrue(np.all(batch.weights > 0) and np.all(batch.weights <= 1))
        self.assertEqual(batch.weights.max(), 1.0)
        # w_i = (P_min / P_i)^beta over the batch, and P_i = p_i / sum p with p = (loss + eps)^a.
        np.testing.assert_allclose(
            batch.weights, (batch.probabilities.min() / batch.probabilities) ** 0.7, rtol=1e-9)
        priorities = (np.arange(1.0, 41.0) + 1e-6) ** 0.6
        np.testing.assert_allclose(batch.probabilities,
                                   priorities[batch.generations] / priorities.sum(), rtol=1e-6)
        np.testing.assert_array_equal(batch.slots, batch.generations % 64)
        np.testing.assert_array_equal(batch.records, inserted[batch.generations])
        # The same bytes through a structured dtype.
        layout = np.dtype([("id", "<u8"), ("pattern", "u1", (8,))])
        np.testing.assert_array_equal(batch.unpack(layout)["id"], batch.generations)

        self.assertTrue(np.all(client.sample(32, beta=0.0).weights == 1.0))
        without = client.sample(8, beta=0.5, records=False)
        self.assertIsNone(without.records)
        self.assertEqual(len(without.weights), 8)

    def test_a_large_loss_makes_its_record_drawn_far_more_often(self):
        _, client = self.start(16, 64, "--alpha", "1", "--epsilon", "0")
        generations = client.insert(id_records(0, 20, 16))
        slots = generations % 64

        before = np.concatenate([client.sample(1000, beta=0.4).slots for _ in range(2)])
        self.assertLess(np.mean(before == 7), 0.2)  # all equal: about 1 in 20

        losses = np.ones(20)
        losses[7] = 1000.0
        self.assertEqual(client.update_priorities(slots, generations, losses)["applied"], 20)
        after = client.sample(1000, beta=0.4)
        draws = np.concatenate([after.slots, client.sample(1000, beta=0.4).slots])
        self.assertGreater(np.mean(draws == 7), 0.95)  # P = 1000 / 1019
        np.testing.assert_allclose(after.probabilities[after.slots == 7], 1000 / 1019, rtol=1e-6)
        np.testing.assert_allclose(after.probabilities[after.slots != 7], 1 / 1019, rtol=1e-6)

        # A generation the slot no longer holds is stale; NaN, infinite and negative are rejected.
        counts = client.update_priorities([7, 3, 4, 5], [7 + 64, 3, 4, 5],
                                          [1.0, np.nan, np.inf, -1.0])
        self.assertEqual(counts, {"applied": 0, "stale": 1, "rejected": 3})
        self.assertEqual(client.read([7]).priorities[0], 1000.0)
        with self.assertRaises(ValueError):
            client.update_priorities([1, 2], [1], [1.0])

    def test_a_withdrawn_record_is_never_drawn_again_with_uniform_sampling(self):
        _, client = self.start(16, 64, "--alpha", "0")
        generations = client.insert(id_records(0, 10, 16))
        counts = client.withdraw([4, 5, 99], [generations[4], generations[5] + 64, 0])
        self.assertEqual(counts, {"withdrawn": 1, "stale": 1, "rejected": 1})
        draws = np.concatenate([client.sample(500, beta=1.0).slots for _ in range(4)])
        self.assertFalse(np.any(draws == 4))
        self.assertEqual(set(draws.tolist()), set(range(10)) - {4})
        self.assertEqual(client.read([4]).priorities[0], 0.0)
        self.assertEqual(client.status()["withdrawn"], 1)
        with self.assertRaises(ValueError):
            client.withdraw([1, 2], [1])

    def test_a_malformed_insert_is_refused_and_stores_nothing(self):
        _, client = self.start(16, 64)
        with self.assertRaises(ReplayError) as caught:
            client.insert(np.zeros((3, 15), dtype=np.uint8))  # 45 bytes: not whole records
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn("16-byte records", caught.exception.message)
        # 48 bytes are three 16-byte records, but the array says it holds 4 of 12 bytes.
        with self.assertRaises(ReplayError) as caught:
            client.insert(np.zeros(4, dtype=[("a", "<u4"), ("b", "<u8")]))
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn('"count" says 4', caught.exception.message)
        self.assertEqual(client.status()["size"], 0)

        client.insert(id_records(0, 1, 16))
        self.assertEqual(client.status()["size"], 1)
        # Other errors of the daemon keep their code too.
        with self.assertRaises(ReplayError) as caught:
            client.sample(4, beta=2.0)
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        with self.assertRaises(ReplayError) as caught:
            client.call("no-such-command")
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        with self.assertRaises(ReplayError) as caught:
            client.read([64])
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")

    def test_read_returns_records_generations_and_empty_slots(self):
        _, client = self.start(16, 64)
        inserted = id_records(0, 3, 16)
        client.insert(inserted)
        result = client.read([2, 0, 10])
        np.testing.assert_array_equal(result.found, [True, True, False])
        np.testing.assert_array_equal(result.generations, [2, 0, 0])
        np.testing.assert_array_equal(result.priorities[:2], [1.0, 1.0])  # initial priority
        self.assertTrue(np.isnan(result.priorities[2]))
        np.testing.assert_array_equal(result.records[:2], inserted[[2, 0]])
        np.testing.assert_array_equal(result.records[2], np.zeros(16, np.uint8))

    # --- n-step transitions ---

    def test_the_nstep_writer_writes_discounted_returns_and_flushes_episode_tails(self):
        layout = transition_dtype(obs_shape=(2,), obs_dtype="<f4", action_dtype="<i8",
                                  record_bytes=48)
        _, client = self.start(48, 64)
        with self.assertRaises(ValueError) as caught:  # 32 bytes against the daemon's 48
            NStepWriter(client, n=3, gamma=0.5, dtype=transition_dtype(obs_shape=(2,)))
        self.assertIn("48", str(caught.exception))

        writer = NStepWriter(client, n=3, gamma=0.5, dtype=layout, batch_size=4)
        obs = lambda episode, t: [episode, t]  # noqa: E731
        flushed = []

        def episode(number, rewards, terminated):
            last = len(rewards) - 1
            for t, reward in enumerate(rewards):
                generations = writer.add(obs(number, t), 10 * number + t, reward,
                                         obs(number, t + 1), terminated=terminated and t == last,
                                         truncated=not terminated and t == last)
                if generations is not None:
                    flushed.append(list(generations))
                if number == 1 and t < 2:
                    self.assertEqual(writer.pending(), 0)  # fewer than n rewards seen yet

        episode(1, [1, 2, 3, 4, 5], terminated=True)   # ends in a terminal state
        episode(2, [1, 1], terminated=False)           # cut by a time limit: bootstraps
        episode(3, [8], terminated=True)               # shorter than n
        self.assertEqual(flushed, [[0, 1, 2, 3, 4]])   # the batch of 4 filled at episode 1's end
        self.assertEqual(client.status()["size"], 5)
        writer.close()                                 # the other 3
        self.assertEqual(writer.written, 8)

        # (obs, action, reward, discount, next_obs), worked by hand with gamma = 0.5, n = 3.
        expected = [
            ([1, 0], 10, 1 + 0.5 * 2 + 0.25 * 3, 0.125, [1, 3]),
            ([1, 1], 11, 2 + 0.5 * 3 + 0.25 * 4, 0.125, [1, 4]),
            ([1, 2], 12, 3 + 0.5 * 4 + 0.25 * 5, 0.0, [1, 5]),  # n steps, the last terminal
            ([1, 3], 13, 4 + 0.5 * 5, 0.0, [1, 5]),        # terminated: no bootstrap
            ([1, 4], 14, 5, 0.0, [1, 5]),
            ([2, 0], 20, 1 + 0.5 * 1, 0.25, [2, 2]),       # truncated: gamma^2, then gamma^1
            ([2, 1], 21, 1, 0.5, [2, 2]),
            ([3, 0], 30, 8, 0.0, [3, 1]),
        ]
        stored = client.read(range(8))
        self.assertTrue(stored.found.all())
        np.testing.assert_array_equal(stored.generations, np.arange(8))
        got = unpack(stored.records, layout)
        for row, (o, action, reward, discount, next_o) in zip(got, expected):
            np.testing.assert_array_equal(row["obs"], o)
            self.assertEqual(row["action"], action)
            self.assertEqual(row["reward"], reward)
            self.assertEqual(row["discount"], discount)
            np.testing.assert_array_equal(row["next_obs"], next_o)

    def test_priorities_from_td_are_absolute_errors(self):
        np.testing.assert_array_equal(priorities_from_td([[-2.0], [0.5], [0.0]]), [2.0, 0.5, 0.0])
        self.assertEqual(priorities_from_td(np.float32([-1])).dtype, np.float64)

    # --- finding the daemon, CURVE, the transport ---

    def test_endpoint_names_match_the_daemons(self):
        _, client = self.start(16, 64)
        with open(os.path.join(self.dir, "replay.json"), encoding="utf-8") as file:
            record = json.load(file)
        self.assertEqual(default_control_endpoint(self.dir), record["control_endpoint"])
        link = os.path.join(tempfile.gettempdir(), f"azpy-link-{os.getpid()}")
        os.symlink(self.dir, link)
        try:
            self.assertEqual(default_control_endpoint(link + "/"), record["control_endpoint"])
        finally:
            os.unlink(link)

        # Past 107 bytes the daemon binds an abstract name derived from the run directory.
        deep = os.path.join(self.dir, "d" * 100)
        os.mkdir(deep)
        self.start(16, 64, run_dir=deep)
        with open(os.path.join(deep, "replay.json"), encoding="utf-8") as file:
            endpoint = json.load(file)["control_endpoint"]
        self.assertTrue(endpoint.startswith("ipc://@az-"), endpoint)
        self.assertEqual(default_control_endpoint(deep), endpoint)
        os.unlink(os.path.join(deep, "replay.json"))  # found without the record, too
        self.assertEqual(self.client(run_dir=deep).status()["capacity"], 64)

    def test_tcp_speaks_curve_and_refuses_other_keys(self):
        _, client = self.start(16, 64, "--endpoint", "tcp://127.0.0.1:*")
        endpoint = client.endpoint
        self.assertRegex(endpoint, r"^tcp://127\.0\.0\.1:\d+$")  # the bound port, from discovery
        generations = client.insert(id_records(0, 4, 16))
        batch = client.sample(8, beta=0.5)
        np.testing.assert_array_equal(batch.records, id_records(0, 4, 16)[batch.generations])
        np.testing.assert_array_equal(generations, np.arange(4))

        keys = os.path.join(self.dir, "keys")
        stranger = os.path.join(self.dir, "stranger-keys")
        os.mkdir(stranger, 0o700)
        shutil.copy(os.path.join(keys, "server.public"), stranger)
        public, secret = zmq.curve_keypair()
        with open(os.path.join(stranger, "client.public"), "wb") as file:
            file.write(b"# another client\n" + public + b"\n")
        fd = os.open(os.path.join(stranger, "client.secret"), os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, secret + b"\n")
        os.close(fd)

        # The refusal ends the call within its first attempt, not after retrying: with 3 attempts
        # of 20 s, retries would take a minute. (Usually milliseconds; on a loaded box the ZAP
        # answer has taken 5 s, so the bound is one attempt, not a fixed short time.)
        refused = self.client(endpoint=endpoint, keys_dir=stranger, timeout=20.0, attempts=3)
        started = time.monotonic()
        with self.assertRaises(ReplayError) as caught:
            refused.status()
        self.assertEqual(caught.exception.code, "PERMISSION_DENIED")
        self.assertIn("refused this client's CURVE key", caught.exception.message)
        self.assertLess(time.monotonic() - started, 20.0)
        self.assertGreaterEqual(client.status()["curve_refused"], 1)

        # A secret others may read is refused before any connection, as the daemon refuses it.
        os.chmod(os.path.join(stranger, "client.secret"), 0o644)
        with self.assertRaises(ReplayError) as caught:
            ReplayClient(endpoint=endpoint, keys_dir=stranger)
        self.assertEqual(caught.exception.code, "FAILED_PRECONDITION")
        self.assertIn("chmod 600", caught.exception.message)

        # Our own key but another server key: the handshake never completes.
        wrong_server = os.path.join(self.dir, "wrong-server-keys")
        shutil.copytree(keys, wrong_server)
        with open(os.path.join(wrong_server, "server.public"), "wb") as file:
            file.write(zmq.curve_keypair()[0] + b"\n")
        with self.assertRaises(ReplayError) as caught:
            self.client(endpoint=endpoint, keys_dir=wrong_server, timeout=1.5, attempts=1).status()
        self.assertEqual(caught.exception.code, "PERMISSION_DENIED")
        self.assertIn("no CURVE handshake completed", caught.exception.message)

        with self.assertRaises(ValueError):  # tcp:// without keys is never spoken in the clear
            ReplayClient(endpoint=endpoint)

    def test_no_daemon_is_a_deadline_with_a_hint(self):
        client = self.client(run_dir=self.dir, timeout=0.2, attempts=2)
        started = time.monotonic()
        with self.assertRaises(ReplayError) as caught:
            client.status()
        self.assertEqual(caught.exception.code, "DEADLINE_EXCEEDED")
        self.assertIn("after 2 attempt(s)", caught.exception.message)
        self.assertIn("no socket at", caught.exception.message)
        self.assertLess(time.monotonic() - started, 3.0)

    def test_a_daemon_killed_during_a_call_is_unavailable_at_once(self):
        # The sample waits for records that never come; the daemon dies meanwhile.
        daemon, client = self.start(16, 64, "--min-size-to-sample", "10")
        daemon.expect_clean_exit = False
        killer = threading.Timer(0.5, daemon.process.kill)
        killer.start()
        started = time.monotonic()
        with self.assertRaises(ReplayError) as caught:
            client.call("sample", timeout=20.0, attempts=1, batch=1, beta=0.5, timeout_ms=20000)
        killer.join()
        self.assertEqual(caught.exception.code, "UNAVAILABLE")
        self.assertLess(time.monotonic() - started, 10.0)

    def test_docs_example_runs(self):
        with open(os.path.join(REPO, "docs", "replay.md"), encoding="utf-8") as file:
            text = file.read()
        section = text[text.index("## From Python"):]
        code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
        record_bytes = re.search(r"--record-bytes (\d+)", code).group(1)
        self.start(int(record_bytes), 100000)
        env = dict(os.environ, AZ_RUN_DIR=self.dir, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=os.path.join(REPO, "python"))
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True, timeout=240)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("greedy actions: [1 1 1 1 1 1 1]", result.stdout)


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    if not os.access(AZ_REPLAY, os.X_OK):
        sys.exit(f"no az-replay at {AZ_REPLAY} (set AZ_REPLAY_BINARY)")
    unittest.main(verbosity=2)
