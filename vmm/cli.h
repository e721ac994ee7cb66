/* cli.h: what the ringvm CLI's files share (vmm/main.c, vmm/cli_run.c, vmm/cli_serve.c). */
#ifndef RINGVM_CLI_H
#define RINGVM_CLI_H

/* One line "ringvm: ..." on stderr, then exit RINGVM_EXIT_ERROR (125). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* `ringvm run ...` (argv[0] is "run"): build the config, boot, run; the guest command's status. */
int cmd_run(int argc, char **argv);

/* `ringvm config --print ...`: the effective configuration of `ringvm run` with the same
   arguments, checked, as JSON on stdout; 0. */
int cmd_config(int argc, char **argv);

/* Start the clock --timing measures from (first thing in main). */
void cli_run_clock_start(void);

/* `ringvm serve ...` (argv[0] is "serve"): parse, serve until a signal; the exit status. */
int cmd_serve(int argc, char **argv);

#endif
