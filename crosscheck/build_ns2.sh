#!/usr/bin/env bash
# Build ns-2.35 with the MQ-ECN authors' code (github.com/HKUST-SING/MQ-ECN-NS2 at
# dc2a8f6, their NSDI'16 simulator) for `make crosscheck`. Debian bookworm; needs
# root for apt. Safe to re-run: finished steps are skipped.
#
#   NS2_BUILD  where to build (default /tmp/ns2build); the crosscheck reads
#              $NS2_BUILD/ns-2.35/ns and $NS2_BUILD/mqecn/scripts.
#   MQECN_SRC  a copy of the authors' tree; without it, `git clone` (needs network).
#
# Sources: ns-2.35 is Debian's orig tarball (`apt-get source ns2`; Debian's own
# patch tarball is not used, and was missing from the mirror when this was
# written); Tcl/Tk/OTcl/TclCL are Debian's packages. Today's g++ builds ns-2.35
# with -std=gnu++98 -fpermissive instead of Debian's patches.
set -euo pipefail
B=${NS2_BUILD:-/tmp/ns2build}
COMMIT=dc2a8f690c365c2b42e28e4693e8f38e943a2d55
mkdir -p "$B"
cd "$B"

debsrc() {  # a deb-src line, for `apt-get source`
  grep -rqs '^Types: deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ && return
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    > /etc/apt/sources.list.d/ns2-crosscheck-src.sources
  apt-get update -qq
}

# Tools and libraries.
if ! dpkg -s tclcl-dev libotcl1-dev tcl8.6-dev tk8.6-dev libxmu-dev libxt-dev >/dev/null 2>&1; then
  debsrc
  apt-get update -qq
  apt-get install -y -qq build-essential tcl8.6-dev tk8.6-dev tclcl tclcl-dev libotcl1-dev \
    libx11-dev libxt-dev libxmu-dev xz-utils patch >/dev/null
fi

# ns-2.35 itself.
if [[ ! -d ns-2.35 ]]; then
  debsrc
  ls ns2_2.35+dfsg.orig.tar.xz >/dev/null 2>&1 || apt-get source --download-only ns2 || true
  tar xf ns2_2.35+dfsg.orig.tar.xz
fi

# The authors' tree.
if [[ ! -d mqecn ]]; then
  if [[ -n "${MQECN_SRC:-}" ]]; then
    cp -r "$MQECN_SRC" mqecn
  else
    git clone -q https://github.com/HKUST-SING/MQ-ECN-NS2 mqecn
    git -C mqecn checkout -q "$COMMIT"
  fi
fi

# Their README's three steps: the patch (paths start at ns-allinone-2.35/, so -p2
# from inside ns-2.35), the DWRR/WRR queues, and the two objects in the Makefile.
cd ns-2.35
if [[ ! -f .mqecn-done ]]; then
  patch -p2 -N --ignore-whitespace -s -i ../mqecn/mqecn.patch || \
    patch -p2 -R --dry-run --ignore-whitespace -s -f -i ../mqecn/mqecn.patch >/dev/null
  cp ../mqecn/queue/{wrr,dwrr}.{h,cc} queue/
  grep -q 'queue/dwrr.o' Makefile.in || \
    sed -i 's|queue/red\.o \\|queue/red.o queue/wrr.o queue/dwrr.o \\|' Makefile.in
  # Debian's libtclcl declares TclObject::bind(const char*, int64_t*) without
  # exporting it; only PackMime/DelayBox use it. A stand-in lets ns link.
  printf '#include "config.h"\n#include <tclcl.h>\nvoid TclObject::bind(const char* v, int64_t* p) { bind(v, (int*)p); }\n' \
    > common/tclcl-int64-stub.cc
  touch .mqecn-done
fi

# configure wants source-tree layouts of tcl, tk, otcl and tclcl: point small
# directories at the installed files.
R=$B/roots
if [[ ! -f $R/.done ]]; then
  rm -rf "$R"
  mkdir -p "$R"/{tcl,tk,otcl,tclcl}/{include,lib} "$R/tclcl/bin"
  cp -r /usr/share/tcltk/tcl8.6 "$R/tcl/lib/tcl8.6"
  mkdir -p "$R/tcl/lib/tcl8.6/http"
  cp /usr/share/tcltk/tcl8.6/http1.0/http.tcl "$R/tcl/lib/tcl8.6/http/"
  cp -f /usr/include/tcl8.6/tcl-private/generic/*.h "$R/tcl/include/"
  cp -f /usr/include/tcl8.6/*.h "$R/tcl/include/"  # the public headers win
  cp /usr/include/tcl8.6/tcl-private/unix/*.h "$R/tcl/include/" 2>/dev/null || true
  ln -sf /usr/lib/x86_64-linux-gnu/libtcl8.6.so "$R/tcl/lib/libtcl8.6.so"
  cp -r /usr/share/tcltk/tk8.6 "$R/tk/lib/tk8.6"
  cp /usr/include/tcl8.6/tk*.h "$R/tk/include/" 2>/dev/null || true
  ln -sf /usr/lib/x86_64-linux-gnu/libtk8.6.so "$R/tk/lib/libtk8.6.so"
  cp /usr/include/otcl.h "$R/otcl/include/"
  for n in libotcl1.14.so libotcl.so; do ln -sf /usr/lib/x86_64-linux-gnu/libotcl.so "$R/otcl/lib/$n"; done
  cp /usr/include/tclcl/*.h "$R/tclcl/include/"
  ln -sf /usr/lib/x86_64-linux-gnu/libtclcl.so "$R/tclcl/lib/libtclcl.so"
  ln -sf /usr/bin/tcl2c++ "$R/tclcl/bin/tcl2c++"
  touch "$R/.done"
fi

if [[ ! -f Makefile ]]; then
  sed -i 's/TCL_ALT_VERS=8\.5/TCL_ALT_VERS=8.6/; s/TK_ALT_VERS=8\.5/TK_ALT_VERS=8.6/' configure
  ./configure --with-tcl="$R/tcl" --with-tcl-ver=8.6 --with-tk="$R/tk" --with-tk-ver=8.6 \
    --with-otcl="$R/otcl" --with-tclcl="$R/tclcl" > configure.log 2>&1 || { tail -20 configure.log; exit 1; }
  sed -i 's|^\(OBJ_CC = \\\)$|\1\n\tcommon/tclcl-int64-stub.o \\|' Makefile
fi
# About 2 minutes on one core.
nice -n 10 make -j"${JOBS:-1}" ns CCOPT="-O2 -std=gnu++98 -fpermissive -Wno-narrowing -DUSE_INTERP_RESULT -w" \
  > make.log 2>&1 || { grep -E 'error|Error' make.log | head -20; exit 1; }
echo "ns-2 with the MQ-ECN code: $B/ns-2.35/ns"
