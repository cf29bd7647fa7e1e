/*
 * Captures what the library writes to stderr during a test (the one-line
 * reports of a hostile peer given up on), so the test can assert that the
 * report names the problem. Test code only; one capture at a time.
 */
#ifndef PULSARC_TEST_STDERR_CAPTURE_H
#define PULSARC_TEST_STDERR_CAPTURE_H
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct captured {
    char path[64];
    int saved;
} captured_t;

/* stderr into a temporary file until release_stderr. */
static inline void capture_stderr(captured_t *c) {
    snprintf(c->path, sizeof c->path, "/tmp/pulsarc-stderr-XXXXXX");
    int fd = mkstemp(c->path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    c->saved = dup(2);
    ck_assert_int_ge(c->saved, 0);
    ck_assert_int_ge(dup2(fd, 2), 0);
    close(fd);
}

/* Restores stderr and returns what was written (malloc'd, NUL-terminated). */
static inline char *release_stderr(captured_t *c) {
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    FILE *f = fopen(c->path, "rb");
    ck_assert_ptr_nonnull(f);
    char *text = calloc(1, 1 << 16);
    ck_assert_ptr_nonnull(text);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(c->path);
    return text;
}
#endif
