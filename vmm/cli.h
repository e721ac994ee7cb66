/* cli.h: what the ringvm CLI's files share (vmm/main.c, vmm/cli_serve.c). */
#ifndef RINGVM_CLI_H
#define RINGVM_CLI_H

/* One line "ringvm: ..." on stderr, then exit RINGVM_EXIT_ERROR (125). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* `ringvm serve ...` (argv[0] is "serve"): parse, serve until a signal; the exit status. */
int cmd_serve(int argc, char **argv);

#endif
