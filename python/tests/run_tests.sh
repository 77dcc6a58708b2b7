#!/bin/sh
# run_tests.sh PYTHON TESTS_DIR: the sfctune tests under pytest, or under
# unittest where PYTHON has no pytest (the tests are unittest cases, which
# pytest runs too).
set -eu
python=$1
tests=$2
if "$python" -c "import pytest" 2>/dev/null; then
  exec "$python" -m pytest -q -p no:cacheprovider "$tests"
fi
echo "run_tests: $python has no pytest (apt-get install python3-pytest); running unittest" >&2
exec "$python" -m unittest discover -s "$tests" -p "test_*.py" -v
