#!/usr/bin/env python3
"""Run a command, pass its stdout and stderr through, then print "exit N"."""
import subprocess
import sys

p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.write(p.stdout.decode(errors="replace"))
print("exit %d" % p.returncode)
