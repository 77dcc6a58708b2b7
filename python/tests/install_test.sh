#!/bin/sh
# install_test.sh PYTHON BUILD_DIR WORK_DIR PYTHON_INSTALL_DIR: installs the
# build into WORK_DIR/prefix, then imports the installed copy of sfctune (with
# PYTHONPATH at its folder) and checks that it loads the installed libraries,
# not the build tree's, and that a query and a GEMM run.
set -eu
python=$1
build=$2
work=$3
package_dir=$4
prefix=$work/prefix
rm -rf "$work"
cmake --install "$build" --prefix "$prefix" >/dev/null
case $package_dir in
  /*) site=$package_dir ;;
  *) site=$prefix/$package_dir ;;
esac
test -f "$site/sfctune/__init__.py" || { echo "install_test: no sfctune in $site" >&2; exit 1; }
test -f "$site/sfctune/_config.py" || { echo "install_test: no _config.py in $site/sfctune" >&2; exit 1; }
cd "$work"
PYTHONPATH=$site "$python" - "$prefix" <<'PY'
import os
import sys

import numpy as np

import sfctune
from sfctune import _library

prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(sfctune.__file__).startswith(prefix), sfctune.__file__
assert os.path.realpath(_library.library_dir()).startswith(prefix), _library.library_dir()
with sfctune.open(None) as table:
    answer = table.query(256, 256, 256, threads=1)
assert answer.tier in ("model", "default"), answer
a = np.arange(12, dtype=np.float64).reshape(3, 4)
b = np.arange(8, dtype=np.float64).reshape(4, 2)
assert np.array_equal(sfctune.gemm(a, b), a @ b)
libraries = sfctune.status()["libraries"]
assert libraries and all(os.path.realpath(p).startswith(prefix) for p in libraries), libraries
print("installed sfctune %s: %s, libraries %s" % (sfctune.__version__, answer, libraries))
PY
