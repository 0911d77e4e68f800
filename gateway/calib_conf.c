/* Space calibrations: their configuration (the `calibrations:` section; docs/calibration.md),
 * checked and loaded into a set, and the adapters they name looked up (gateway/calib_int.h). */
#include <errno.h>
#include <event2/event.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/calib_int.h"
#include "gateway/gateway.h"

#define COMPONENT "calibration"
#define DEG (M_PI / 180)

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) >= 64) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

int xg_calib_adapter_index(const struct xg_gateway *gw, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++)
        if (gw->adapters[i] && !strcmp(gw->adapters[i]->a.name, name)) return i;
    return -1;
}

/* the adapter named by an entity name's first component ("mocap/hmd" -> mocap), or -1 */
int xg_calib_prefix_index(const struct xg_gateway *gw, const char *entity)
{
    char a[64];
    const char *sl = strchr(entity, '/');
    if (!sl || (size_t)(sl - entity) >= sizeof a) return -1;
    snprintf(a, sizeof a, "%.*s", (int)(sl - entity), entity);
    return xg_calib_adapter_index(gw, a);
}

static int entity_key(const struct xg_conf *node, const char *key, char *out, size_t size,
                      struct xg_error *err)
{
    const char *s;
    int rc = xg_conf_string(node, key, NULL, &s, err);
    if (rc) return rc;
    if (!s)
        return xg_conf_error(err, node, -EINVAL, "calibration needs '%s' (an entity name)", key);
    if (!*s || strlen(s) >= size)
        return xg_conf_error(err, xg_conf_get(node, key), -EINVAL,
                             "%s '%s' must be an entity name of 1 to %zu bytes", key, s, size - 1);
    snprintf(out, size, "%s", s);
    return 0;
}

static int load_one(struct xg_gateway *gw, const struct xg_conf *node, struct xg_calib *c,
                    struct xg_error *err)
{
    int rc;
    const char *s;
    if ((rc = xg_conf_expect(node, XG_CONF_MAP, "calibrations item", err))) return rc;
    if ((rc = xg_conf_string(node, "name", NULL, &s, err))) return rc;
    if (!s) return xg_conf_error(err, node, -EINVAL, "calibration needs a 'name'");
    if (!valid_name(s))
        return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                             "calibration name '%s' must be 1-63 of [A-Za-z0-9_.-]", s);
    snprintf(c->name, sizeof c->name, "%s", s);
    for (int i = 0; gw->calib && i < gw->calib->n; i++)
        if (!strcmp(gw->calib->items[i]->name, c->name))
            return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                                 "calibration name '%s' is used twice", s);
    if ((rc = entity_key(node, "reference", c->reference, sizeof c->reference, err)) ||
        (rc = entity_key(node, "target", c->target, sizeof c->target, err)))
        return rc;
    if (!strcmp(c->reference, c->target))
        return xg_conf_error(err, xg_conf_get(node, "target"), -EINVAL,
                             "target '%s' is the reference itself: they must be two systems' "
                             "views of one object",
                             c->target);
    char def[64] = "";
    const char *sl = strchr(c->target, '/');
    if (sl && (size_t)(sl - c->target) < sizeof def)
        snprintf(def, sizeof def, "%.*s", (int)(sl - c->target), c->target);
    if ((rc = xg_conf_string(node, "apply_to", def[0] ? def : NULL, &s, err))) return rc;
    const struct xg_conf *at = xg_conf_get(node, "apply_to");
    if (!s || xg_calib_adapter_index(gw, s) < 0)
        return xg_conf_error(err, at ? at : xg_conf_get(node, "target"), -EINVAL,
                             "apply_to '%s' is not an adapter of this configuration (it names the "
                             "adapter whose space is moved; by default the target's first name "
                             "component)",
                             s ? s : "");
    snprintf(c->apply_to, sizeof c->apply_to, "%s", s);
    if (xg_calib_prefix_index(gw, c->reference) == xg_calib_adapter_index(gw, c->apply_to))
        return xg_conf_error(err, at ? at : xg_conf_get(node, "target"), -EINVAL,
                             "apply_to '%s' is the reference's own adapter: the reference space "
                             "stays, the other one is moved",
                             c->apply_to);
    if (gw->calib)
        for (int i = 0; i < gw->calib->n; i++)
            if (!strcmp(gw->calib->items[i]->apply_to, c->apply_to))
                return xg_conf_error(err, at ? at : node, -EINVAL,
                                     "adapter '%s' is already moved by calibration '%s': one "
                                     "calibration per apply_to",
                                     c->apply_to, gw->calib->items[i]->name);
    if ((rc = xg_conf_string(node, "mode", "once", &s, err))) return rc;
    if (strcmp(s, "once") && strcmp(s, "continuous"))
        return xg_conf_error(err, xg_conf_get(node, "mode"), -EINVAL,
                             "mode '%s' must be once or continuous", s);
    c->continuous = !strcmp(s, "continuous");
    double v;
    if ((rc = xg_conf_double(node, "drift_mm", 10, 0.1, 10000, &v, err))) return rc;
    c->drift_m = v * 1e-3;
    if ((rc = xg_conf_double(node, "drift_deg", 1, 0.01, 180, &v, err))) return rc;
    c->drift_rad = v * DEG;
    if ((rc = xg_conf_double(node, "max_offset_ms", 500, 10, 5000, &v, err))) return rc;
    c->max_offset_s = v * 1e-3;
    if ((rc = xg_conf_double(node, "collect_s", 8, 4, 20, &v, err))) return rc;
    c->collect_s = v;
    return xg_conf_check_unused(node, err);
}

static void calib_free(struct xg_calib *c)
{
    if (!c) return;
    free(c->ref.s);
    free(c->tgt.s);
    free(c);
}

void xg_calib_set_free(struct xg_calib_set *set)
{
    if (!set) return;
    if (set->timer) event_free(set->timer);
    xg_calib_worker_free(set->worker); /* joins: waits for a solve being run (at most one) and
                                          completes the queued writes of the state file */
    free(set->latest);
    for (int i = 0; i < set->n; i++)
        calib_free(set->items[i]);
    free(set->items);
    free(set);
}

int xg_calib_load(struct xg_gateway *gw, const struct xg_conf *node, struct xg_error *err)
{
    if (!gw->calib && !(gw->calib = calloc(1, sizeof *gw->calib)))
        return xg_error_set(err, -ENOMEM, "out of memory");
    struct xg_calib_set *set = gw->calib;
    set->gw = gw;
    struct xg_calib *c = calloc(1, sizeof *c);
    struct xg_calib **items = realloc(set->items, (size_t)(set->n + 1) * sizeof *items);
    if (items) set->items = items;
    if (!c || !items) {
        free(c);
        return xg_error_set(err, -ENOMEM, "out of memory");
    }
    int rc = load_one(gw, node, c, err);
    if (rc) {
        free(c);
        return rc;
    }
    c->apply_index = c->ref_origin = c->tgt_origin = -1;
    c->last_rc = 1;
    c->collecting = true;
    items[set->n++] = c;
    return 0;
}
