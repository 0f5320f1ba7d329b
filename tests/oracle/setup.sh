#!/usr/bin/env bash
# setup.sh - install the DuckDB oracle (Node.js package @duckdb/node-api, pinned
# to the version that wrote the reference data in shared/tpch) into
# tests/oracle/node_modules, unless it is already there. Prints what it did.
# Exit status: 0 when the package is usable afterwards, 1 otherwise (with the reason).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pkg="@duckdb/node-api"
version="1.5.6-r.1"

if ! command -v node >/dev/null 2>&1; then
    echo "oracle setup: node (Node.js >= 18) is not installed" >&2
    exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "oracle setup: npm is not installed" >&2
    exit 1
fi

installed="$(node -e "try { console.log(require('$here/node_modules/$pkg/package.json').version) } catch (e) {}" 2>/dev/null)"
if [ "$installed" = "$version" ]; then
    echo "oracle setup: $pkg $version already installed in $here/node_modules"
    exit 0
fi

echo "oracle setup: installing $pkg@$version into $here/node_modules${installed:+ (found $installed)}"
if ! npm install --prefix "$here" --no-save --no-audit --no-fund "$pkg@$version" >&2; then
    echo "oracle setup: npm install of $pkg@$version failed" >&2
    exit 1
fi
if ! node -e "require('$here/node_modules/$pkg')" >/dev/null 2>&1; then
    echo "oracle setup: $pkg installed but cannot be loaded" >&2
    exit 1
fi
echo "oracle setup: installed $pkg $version"
