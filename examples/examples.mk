# examples: programs that use libringvm the way an embedder does, from an installed tree.
# tests/boot/install.sh installs into a DESTDIR and builds them there with pkg-config.
HOST_TESTS += tests/boot/install.sh
