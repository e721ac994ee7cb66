# examples: programs that use libringvm the way an embedder does, from an installed tree.
# tests/host/install.sh (a host test, tests/host/host.mk) installs into a DESTDIR and builds them there
# with pkg-config.
