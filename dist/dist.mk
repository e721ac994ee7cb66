# dist: what `make install` puts on a system: the CLI, libringvm (.so with a soname, .a), its header,
# ringvm.pc and the man page ringvm(1).

# The version is the header's (RINGVM_VERSION_*), written once.
version_part = $(shell sed -n 's/^\#define RINGVM_VERSION_$(1) \([0-9]*\)$$/\1/p' include/ringvm.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME := libringvm.so.$(VERSION_MAJOR)
SHLIB := $(B)/libringvm.so.$(VERSION)

# Only the functions of include/ringvm.h are exported (dist/libringvm.map); the rest stays inside.
$(SHLIB): $(LIB_OBJS) dist/libringvm.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script,dist/libringvm.map \
		-Wl,--no-undefined -o $@ $(filter %.o,$^) $(LDLIBS)
	$(Q)ln -sf $(notdir $@) $(B)/$(SONAME) && ln -sf $(SONAME) $(B)/libringvm.so

# The man page, from scdoc source (Debian's scdoc).
MAN := $(BUILD_ROOT)/ringvm.1
$(MAN): dist/ringvm.1.scd
	@$(if $(Q),echo "  SCDOC   $@")
	$(Q)scdoc <$< >$@
ALL_TARGETS += $(MAN)
DEPS_PKGS += scdoc pkg-config
man: $(MAN)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

$(B)/ringvm.pc: dist/ringvm.pc.in include/ringvm.h Makefile
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' $< >$@

# make install PREFIX=/usr/local DESTDIR=/tmp/stage: nothing outside DESTDIR$(PREFIX) is touched.
install: build $(MAN) $(B)/ringvm.pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(B)/ringvm $(DESTDIR)$(BINDIR)/ringvm
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libringvm.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB))
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libringvm.so
	install -m 644 include/ringvm.h $(DESTDIR)$(INCLUDEDIR)/ringvm.h
	install -m 644 $(B)/ringvm.pc $(DESTDIR)$(PKGCONFIGDIR)/ringvm.pc
	install -m 644 $(MAN) $(DESTDIR)$(MANDIR)/man1/ringvm.1

# What install puts there, and nothing else.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ringvm $(DESTDIR)$(LIBDIR)/libringvm.a $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB)) \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libringvm.so \
		$(DESTDIR)$(INCLUDEDIR)/ringvm.h $(DESTDIR)$(PKGCONFIGDIR)/ringvm.pc \
		$(DESTDIR)$(MANDIR)/man1/ringvm.1

.PHONY: install uninstall man
