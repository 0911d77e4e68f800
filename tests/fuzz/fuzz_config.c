/* libFuzzer target for the configuration path: YAML text → conf tree (mappings/conf_yaml) →
 * full gateway validation (every adapter's create(), the unknown-key check and the
 * insecure-settings audit), as `xrgate --check` runs it. Any input must give either success or an
 * error message that starts with a position "<name>:<line>:<col>: " (or names the problem without
 * one for I/O-free failures), and never crash or leak. Seeds: the YAML files in conf/,
 * conf/examples/ and tests/integration/configs/bad/, and tests/fuzz/seeds/fuzz_config/ (inputs that
 * crashed it once: crash-stack-overflow-* nested 5000 levels deep before the depth bound). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/log.h"
#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        xg_log_set_level(XG_LOG_ERROR);
        once = 1;
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = text, .config_name = "fuzz.yaml"};
    int rc = xg_gateway_load(&gw, &o, &err);
    if (rc && !err.msg[0]) {
        fprintf(stderr, "fuzz_config: error %d without a message\n", rc);
        abort();
    }
    xg_gateway_free(&gw);
    free(text);
    xg_log_set_level(XG_LOG_ERROR);
    return 0;
}
