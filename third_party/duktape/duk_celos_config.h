/* celos additions to Duktape's configuration, included at the end of duk_config.h.
 * The interrupt counter lets the embedder abort a runaway script (an endless loop in a
 * workflow file) through celos_duk_exec_timeout_check(), defined in libcelos/src/js. */
#ifndef DUK_CELOS_CONFIG_H
#define DUK_CELOS_CONFIG_H
#define DUK_USE_INTERRUPT_COUNTER
#define DUK_USE_EXEC_TIMEOUT_CHECK(udata) celos_duk_exec_timeout_check(udata)
#ifdef __cplusplus
extern "C" {
#endif
int celos_duk_exec_timeout_check(void *udata);
#ifdef __cplusplus
}
#endif
#endif
