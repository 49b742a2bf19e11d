#!/bin/sh
# Instructions the server spends per request of LOAD (see bench/per_request.py), counted by
# valgrind: the difference between serving SMALL and LARGE requests, over LARGE - SMALL.
# Usage: bench/instructions.sh LOAD [SMALL LARGE]   (from a checkout with its .venv)
# STORE=sqlite keeps the tasks in a SQLite file instead of memory (per_request.py --store).
set -eu
load=$1
small=${2:-200}
large=${3:-1200}
python=${PYTHON:-.venv/bin/python}
store=${STORE:-memory}
count() {
    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$python" bench/per_request.py "$load" --requests "$1" --store "$store" 2>&1 >/dev/null \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
a=$(count "$small")
b=$(count "$large")
echo "$load $(( (b - a) / (large - small) )) instructions/request"
