# tests/posix: the POSIX conformance program (tests/integration/posix.sh diffs its transcripts).
POSIX_CONFORM_SRCS := tests/posix/conform.c tests/posix/conform_util.c tests/posix/conform_open.c \
	tests/posix/conform_names.c tests/posix/conform_symlink.c tests/posix/conform_attr.c \
	tests/posix/conform_cross.c
$(B)/tests/posix_conform: $(call objs_of,$(B)/obj,POSIX_CONFORM_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^
ALL_TARGETS += $(B)/tests/posix_conform
