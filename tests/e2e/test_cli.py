"""The command line as a user meets it: a mistyped command gets "did you mean", each command's
--help talks about its own options only. Needs the built binary (NPUD_BINARY), not torch."""

import os
import subprocess
import unittest

BINARY = os.environ.get("NPUD_BINARY", "")


def npud(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=60)


@unittest.skipUnless(BINARY and os.path.exists(BINARY), "NPUD_BINARY is not set to the built npu-doctor")
class CommandLine(unittest.TestCase):
    def test_mistyped_command_gets_did_you_mean(self):
        for typo, meant in (("anlyze", "analyze"), ("scna", "scan"), ("amp-chek", "amp-check"), ("ver", "versions")):
            with self.subTest(typo=typo):
                r = npud(typo, "x")
                self.assertEqual(r.returncode, 2)
                self.assertIn("unknown command '%s'; did you mean '%s'?" % (typo, meant), r.stderr)
        r = npud("frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", r.stderr)
        self.assertNotIn("did you mean", r.stderr)

    def test_help_of_listing_commands_does_not_mention_fail_on(self):
        for cmd in ("rules", "versions"):
            with self.subTest(cmd=cmd):
                r = npud(cmd, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn("--fail-on", r.stdout)

    def test_run_and_analyze_share_the_meaning_of_o(self):
        for cmd in ("run", "amp-check", "analyze"):
            with self.subTest(cmd=cmd):
                r = npud(cmd, "--help")
                line = next(l for l in r.stdout.splitlines() if "-o," in l)
                self.assertIn("report", line)
        self.assertIn("--capture-dir", npud("run", "--help").stdout)


if __name__ == "__main__":
    unittest.main()
