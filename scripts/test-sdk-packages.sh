#!/usr/bin/env bash
# The SDKs installed the way a user installs them from a clone, then used against a real `wrangler dev`
# (test/packages/installed-sdks.test.mjs, node:test, output in test-results/sdk-packages.log):
# - TypeScript: `npm pack` in sdk/typescript (its prepack builds dist/), the tarball installed into a scratch app in
#   a temp dir, its declarations compiled there with `tsc --strict`, and the app run with the pinned Node.
# - Python: an sdist built from a copy of sdk/python, a wheel built from the unpacked sdist, the wheel installed into
#   a fresh venv; and `pip install ./sdk/python` from the directory into another. Offline: nothing is fetched from
#   a Python index, so building needs setuptools (≥ 61) and wheel beside the interpreter (Debian: python3-setuptools,
#   python3-wheel, python3-venv; installed with apt-get here when no python has them).
# About a minute, most of it wrangler dev starting.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export WRANGLER_SEND_METRICS=false
mkdir -p test-results
# Node 24, pinned as a dev dependency (wrangler needs ≥ 22), even where the machine's node is older.
NODE="$ROOT/node_modules/.bin/node"
[ -x "$NODE" ] || NODE="$(command -v node)"

work="$(mktemp -d "${TMPDIR:-/tmp}/amb-sdk-packages-XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== TypeScript: npm pack, install the tarball into a scratch app"
# As in a fresh clone, nothing built: the pack must build dist/ itself (prepack), not ship a leftover one.
rm -rf sdk/typescript/dist
(cd sdk/typescript && npm pack --pack-destination "$work") >"$work/pack.log" 2>&1 || {
	cat "$work/pack.log" >&2
	exit 1
}
tarball="$(ls "$work"/agent-metering-sdk-*.tgz)"
contents="$(tar tzf "$tarball")"
for file in package/dist/index.js package/dist/index.d.ts package/dist/api.js package/dist/generated/openapi.d.ts; do
	grep -qx "$file" <<<"$contents" || {
		echo "the tarball has no $file; it holds:" >&2
		echo "$contents" >&2
		exit 1
	}
done
app="$work/app"
mkdir -p "$app"
cat >"$app/package.json" <<'JSON'
{ "name": "scratch-app", "version": "1.0.0", "private": true, "type": "module" }
JSON
# Its one dependency (openapi-fetch) comes from npm's cache when `npm ci` already fetched it.
(cd "$app" && npm install --prefer-offline --no-audit --no-fund --loglevel=error "$tarball")
cp test/packages/send.mjs test/packages/send.py test/packages/check.ts "$app/"
cat >"$app/tsconfig.json" <<'JSON'
{
	"compilerOptions": {
		"target": "es2022",
		"module": "nodenext",
		"moduleResolution": "nodenext",
		"lib": ["es2022", "dom"],
		"types": [],
		"strict": true,
		"noEmit": true
	},
	"files": ["check.ts"]
}
JSON
"$NODE" "$ROOT/node_modules/typescript/bin/tsc" -p "$app"

echo "== Python: sdist, wheel from the sdist, venvs"
has_build_tools() { "$1" -c 'import setuptools, wheel, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 61)' 2>/dev/null; }
BUILD_PY=""
for candidate in "${PYTHON:-}" python3 /usr/bin/python3; do
	if [ -n "$candidate" ] && has_build_tools "$candidate"; then
		BUILD_PY="$candidate"
		break
	fi
done
if [ -z "$BUILD_PY" ]; then
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
	$SUDO apt-get update -qq
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Use-Pty=0 \
		python3-setuptools python3-wheel python3-venv python3-pip >/dev/null
	BUILD_PY=/usr/bin/python3
fi
echo "building with $BUILD_PY ($("$BUILD_PY" --version))"
cp -r sdk/python "$work/python-src"
rm -rf "$work/python-src/build" "$work/python-src"/*.egg-info
(cd "$work/python-src" && "$BUILD_PY" -c 'from setuptools import build_meta; build_meta.build_sdist("../sdist")') \
	>"$work/sdist.log" 2>&1 || {
	cat "$work/sdist.log" >&2
	exit 1
}
tar xzf "$work"/sdist/agent-metering-*.tar.gz -C "$work/sdist"
"$BUILD_PY" -m pip wheel -q --no-deps --no-build-isolation --no-index -w "$work/wheel" "$work"/sdist/agent-metering-*/
wheel_file="$(ls "$work"/wheel/agent_metering-*.whl)"
"$BUILD_PY" - "$wheel_file" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
missing = {"agent_metering/__init__.py", "agent_metering/client.py", "agent_metering/py.typed"} - set(names)
assert not missing, f"the wheel lacks {sorted(missing)}: {names}"
PY

# The wheel, into a venv of the python3 a user has.
python3 -m venv "$work/venv-wheel"
"$work/venv-wheel/bin/python" -m pip install -q --no-index "$wheel_file"
# The directory, as the README says (`pip install ./sdk/python`), offline: the build tools come from the system.
"$BUILD_PY" -m venv --system-site-packages "$work/venv-directory"
"$work/venv-directory/bin/python" -m pip install -q --no-index --no-build-isolation "$work/python-src"

echo "== Both against wrangler dev"
SDK_PACKAGE_APP="$app" SDK_PACKAGE_PYTHONS="$work/venv-wheel/bin/python:$work/venv-directory/bin/python" \
	"$NODE" --test --test-reporter=spec test/packages/installed-sdks.test.mjs 2>&1 | tee test-results/sdk-packages.log
