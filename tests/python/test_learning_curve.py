"""scripts/learning-curve: the summary of a run's learning curve (RUN_DIR/benchmark.jsonl, written
by the learner) that docs/learning.md reports for every experiment: the marks, the report means
over its windows, the largest fall between reports, and what it does with lines that are not
scores."""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

CURVE = os.environ.get(
    "AZ_LEARNING_CURVE_SCRIPT",
    os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "learning-curve"))
START_MS = 1_800_000_000_000


def score(seconds, model, share):
    return json.dumps({"time_unix_ms": START_MS + int(seconds * 1000), "model": model,
                       "step": model * 50, "kept": round(share * 1500), "positions": 1500,
                       "share": share, "nontrivial_share": share, "set": "full"})


def run_curve(*args):
    return subprocess.run([sys.executable, CURVE, *args], capture_output=True, text=True,
                          check=False)


class CurveTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.run_dir = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def write(self, lines):
        with open(os.path.join(self.run_dir, "benchmark.jsonl"), "w") as f:
            f.write("".join(line + "\n" for line in lines))

    def summary(self, *args):
        result = run_curve("--json", *args, self.run_dir)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout), result.stderr

    def test_reports_are_the_newest_score_at_each_tick(self):
        # A model every 15 s for ten minutes, the share rising by 0.001 a model; one dip at 6:15.
        lines = []
        for k in range(41):
            share = 0.5 + 0.001 * k
            if k == 25:
                share -= 0.02
            lines.append(score(15 * k, k, share))
        self.write(lines)
        s, _ = self.summary()
        self.assertEqual(s["models"], 41)
        self.assertAlmostEqual(s["minutes"], 10.0)
        # Minute 5 reads model 20, minute 10 the last (model 40); no minute 20 in a 10-minute run.
        self.assertAlmostEqual(s["marks"]["5"], 0.520)
        self.assertAlmostEqual(s["marks"]["10"], 0.540)
        self.assertNotIn("20", s["marks"])
        # Minutes 6-10: the reports at 6.0, 6.5, ..., 10.0 read models 24, 26, ..., 40 (the dip
        # at 25 falls between reports and is not one of them).
        window = s["windows"][0]
        self.assertEqual((window["from"], window["to"], window["reports"]), (6, 10, 9))
        self.assertAlmostEqual(window["mean"], 0.5 + 0.001 * sum(range(24, 41, 2)) / 9)
        self.assertEqual(len(s["windows"]), 1)
        # The last four minutes: models scored at 360 s or later, 24..40 with the dip at 25.
        last = [0.5 + 0.001 * k for k in range(24, 41)]
        last[1] -= 0.02
        self.assertEqual(s["last_4_min_models"], 17)
        self.assertAlmostEqual(s["last_4_min_mean"], sum(last) / len(last))
        self.assertEqual(s["final"], {"model": 40, "share": 0.54, "values": {}})
        self.assertEqual(s["best"]["model"], 40)
        # Rising reports: no fall.
        self.assertEqual(s["largest_fall"]["share"], 0.0)
        self.assertEqual(s["skipped_lines"], 0)

    def test_the_largest_fall_is_between_two_consecutive_reports(self):
        shares = [0.80, 0.82, 0.85, 0.81, 0.84, 0.845]  # one a report (30 s), a fall of 4 points
        self.write([score(30 * k, k, v) for k, v in enumerate(shares)])
        s, _ = self.summary()
        self.assertAlmostEqual(s["largest_fall"]["share"], 0.04)
        self.assertAlmostEqual(s["largest_fall"]["minute"], 1.5)
        # --report-every 60 sees models 2 and 4 only: 0.85 then 0.84.
        s, _ = self.summary("--report-every", "60")
        self.assertAlmostEqual(s["largest_fall"]["share"], 0.01)

    def test_marks_are_read_at_their_minute_whatever_the_reports_spacing(self):
        # A model every 20 s for five minutes; reports every 45 s fall at 0:45, 1:30, 2:15, ...
        # none on minute 1, 2 or 5, yet each mark is the newest score at that minute.
        self.write([score(20 * k, k, 0.6 + 0.01 * k) for k in range(16)])
        s, _ = self.summary("--report-every", "45")
        self.assertAlmostEqual(s["marks"]["1"], 0.63)  # model 3, scored at 60 s
        self.assertAlmostEqual(s["marks"]["2"], 0.66)  # model 6, at 120 s
        self.assertAlmostEqual(s["marks"]["5"], 0.75)  # model 15, at 300 s: the last
        self.assertNotIn("10", s["marks"])

    def test_lines_that_are_not_scores_are_skipped_with_a_warning(self):
        good = [score(30 * k, k, 0.8 + 0.01 * k) for k in range(5)]
        self.write(good[:2] + [
            '{"time_unix_ms": 1800000000000, "model": 7, "share": NaN}',
            json.dumps({"time_unix_ms": START_MS, "model": 8, "share": 1.5}),
            json.dumps({"model": 9, "share": 0.5}),
            "[1, 2]",
        ] + good[2:] + ['{"time_unix_ms": 18000'])  # a line torn by a kill
        s, warnings = self.summary()
        self.assertEqual(s["models"], 5)
        self.assertEqual(s["skipped_lines"], 5)
        self.assertEqual(s["final"]["model"], 4)
        for line in (3, 4, 5, 6, 10):
            self.assertIn("benchmark.jsonl line %d: " % line, warnings)
        self.assertIn("share is missing or not in [0, 1]", warnings)
        self.assertIn("time_unix_ms is missing", warnings)
        self.assertIn("not JSON", warnings)
        # The text form says how many were skipped.
        text = run_curve(self.run_dir)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("5 models scored over 2.0 minutes (full)", text.stdout)
        self.assertIn("5 malformed lines skipped", text.stdout)

    def test_a_run_without_scores_or_a_file_is_an_error(self):
        self.write(["not a score"])
        result = run_curve(self.run_dir)
        self.assertEqual(result.returncode, 1)
        self.assertIn("has no well-formed score (1 lines skipped)", result.stderr)
        result = run_curve(os.path.join(self.run_dir, "missing"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("cannot read", result.stderr)
        result = run_curve("--report-every", "0", self.run_dir)
        self.assertEqual(result.returncode, 2)

    def test_text_names_the_marks_windows_and_fall(self):
        self.write([score(30 * k, k, 0.6 + 0.005 * k) for k in range(41)])  # 20 minutes
        text = run_curve(self.run_dir)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("at minute 1 / 2 / 5 / 10 / 20: 61.0 / 62.0 / 65.0 / 70.0 / 80.0", text.stdout)
        self.assertIn("minutes 6-10 68.0 (9); minutes 10.5-19.5 75.0 (19)", text.stdout)
        self.assertIn("largest fall between reports: 0.0 points", text.stdout)
        self.assertTrue(math.isclose(self.summary()[0]["windows"][1]["mean"], 0.75))

    def test_scores_split_by_solver_value_get_their_own_means(self):
        # Wins kept at 0.9 throughout, draws rising from 0.6 by 0.01 a model (a model every 30 s);
        # the first two lines come from a learner before the split and have no "values".
        lines = [score(30 * k, k, 0.8) for k in range(2)]
        for k in range(2, 21):
            entry = json.loads(score(30 * k, k, 0.8))
            entry["values"] = [{"value": "win", "positions": 1254, "kept": 1129, "share": 0.9},
                               {"value": "draw", "positions": 246, "kept": 0,
                                "share": 0.6 + 0.01 * k}]
            lines.append(json.dumps(entry))
        self.write(lines)
        s, stderr = self.summary()
        self.assertEqual(stderr, "")
        window = s["windows"][0]  # minutes 6-10: the reports read models 12 to 20
        self.assertAlmostEqual(window["values"]["win"], 0.9)
        self.assertAlmostEqual(window["values"]["draw"], 0.76)
        self.assertEqual(s["final"]["values"], {"win": 0.9, "draw": 0.8})
        text = run_curve(self.run_dir)
        self.assertIn("by solver value: minutes 6-10 win 90.0, draw 76.0; final win 90.0, draw 80.0",
                      text.stdout)

    def test_a_malformed_split_leaves_the_line_and_drops_the_split(self):
        entry = json.loads(score(0, 0, 0.7))
        entry["values"] = [{"value": "draw", "share": 1.5}]
        self.write([json.dumps(entry), score(30, 1, 0.8)])
        s, stderr = self.summary()
        self.assertEqual(stderr, "")
        self.assertEqual(s["models"], 2)
        self.assertEqual(s["final"]["values"], {})

    def test_mean_summarises_repeats_with_their_spread(self):
        # Run A: ten minutes at 0.90. Run B: twenty minutes at 0.92, a dip to 0.89 at minute 5
        # (model 10), its final model at 0.96. A model every 30 s in both.
        self.write([score(30 * k, k, 0.90) for k in range(21)])
        other = tempfile.TemporaryDirectory()
        self.addCleanup(other.cleanup)
        shares = [0.92] * 41
        shares[10], shares[40] = 0.89, 0.96
        with open(os.path.join(other.name, "benchmark.jsonl"), "w") as f:
            f.write("".join(score(30 * k, k, v) + "\n" for k, v in enumerate(shares)))
        result = run_curve("--json", "--mean", self.run_dir, other.name)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        self.assertEqual(len(lines), 3)  # one object a run, then the mean
        m = lines[2]
        self.assertEqual(m["mean_of"], [self.run_dir, other.name])
        # Minutes 6-10: both runs (0.90 and 0.92); minutes 10.5-19.5: B alone, no spread.
        six_to_ten, ten_to_twenty = m["windows"][0], m["windows"][1]
        self.assertEqual((six_to_ten["from"], six_to_ten["runs"]), (6, 2))
        self.assertAlmostEqual(six_to_ten["mean"], 0.91)
        self.assertAlmostEqual(six_to_ten["sd"], math.sqrt(2) * 0.01)
        self.assertEqual((ten_to_twenty["from"], ten_to_twenty["runs"]), (10.5, 1))
        self.assertAlmostEqual(ten_to_twenty["mean"], 0.92)
        self.assertIsNone(ten_to_twenty["sd"])
        self.assertAlmostEqual(m["marks"]["5"]["mean"], (0.90 + 0.89) / 2)
        self.assertEqual(m["marks"]["20"]["runs"], 1)
        self.assertAlmostEqual(m["final"]["mean"], 0.93)
        self.assertAlmostEqual(m["final"]["min"], 0.90)
        self.assertAlmostEqual(m["final"]["max"], 0.96)
        self.assertEqual((m["best"]["run"], m["best"]["model"]), (other.name, 40))
        self.assertEqual(m["largest_fall"]["run"], other.name)
        self.assertAlmostEqual(m["largest_fall"]["share"], 0.03)
        # The text form ends with the same, in points.
        text = run_curve("--mean", self.run_dir, other.name)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("mean of 2 runs:", text.stdout)
        self.assertIn("minutes 6-10 91.0 (SD 1.4, 2 runs); minutes 10.5-19.5 92.0 (1 run)",
                      text.stdout)
        self.assertIn("final 93.0 (SD 4.2, 2 runs), 90.0-96.0", text.stdout)
        self.assertIn("largest fall between reports 3.0 points (%s)" % other.name, text.stdout)
        # Without --mean, one object a run and nothing else.
        plain = run_curve("--json", self.run_dir, other.name)
        self.assertEqual(len(plain.stdout.splitlines()), 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
