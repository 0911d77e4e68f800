#include "mappings/naming.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/table/names.h"

void xg_rename_free(struct xg_rename_rules *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->rules[i].match);
        free(r->rules[i].name);
    }
    free(r->rules);
    r->rules = NULL;
    r->n = 0;
}

int xg_rename_from_conf(const struct xg_conf *node, struct xg_rename_rules *out,
                        struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    if (!node) return 0;
    int rc = xg_conf_expect(node, XG_CONF_SEQ, "rename", err);
    if (rc) return rc;
    out->rules = calloc(node->n_items ? node->n_items : 1, sizeof *out->rules);
    if (!out->rules) return -ENOMEM;
    for (size_t i = 0; i < node->n_items; i++) {
        const struct xg_conf *it = node->items[i];
        if ((rc = xg_conf_expect(it, XG_CONF_MAP, "rename item", err))) goto fail;
        const char *match, *name, *kind;
        if ((rc = xg_conf_string(it, "match", NULL, &match, err)) ||
            (rc = xg_conf_string(it, "name", NULL, &name, err)) ||
            (rc = xg_conf_string(it, "kind", NULL, &kind, err)))
            goto fail;
        if (!match) {
            rc = xg_conf_error(err, it, -EINVAL, "rename rule needs 'match: <glob>'");
            goto fail;
        }
        if (name) {
            char key[48];
            snprintf(key, sizeof key, "rename[%zu].name", i);
            if ((rc = xg_name_template_check(name, xg_conf_get(it, "name"), key, err))) goto fail;
        }
        struct xg_rename_rule *r = &out->rules[out->n++];
        r->match = strdup(match);
        r->name = name ? strdup(name) : NULL;
        if (!r->match || (name && !r->name)) {
            rc = -ENOMEM;
            goto fail;
        }
        if (kind) {
            if (xg_kind_parse(kind, &r->kind)) {
                rc = xg_conf_error(err, xg_conf_get(it, "kind"), -EINVAL,
                                   "unknown kind '%s' (rigid_body, head, left_hand, right_hand, "
                                   "controller, joint, object)",
                                   kind);
                goto fail;
            }
            r->has_kind = true;
        }
    }
    return 0;
fail:
    xg_rename_free(out);
    return rc;
}

bool xg_rename_apply(const struct xg_rename_rules *r, const char *default_name, char *name,
                     size_t size, enum xg_kind *kind)
{
    for (size_t i = 0; r && i < r->n; i++) {
        if (fnmatch(r->rules[i].match, default_name, 0) == 0) {
            if (r->rules[i].name) {
                /* the default name is "<adapter>/<source>"; {kind}: the adapter's suggestion */
                char adapter[XG_NAME_MAX];
                size_t alen = strcspn(default_name, "/");
                if (alen >= sizeof adapter) alen = sizeof adapter - 1;
                memcpy(adapter, default_name, alen);
                adapter[alen] = '\0';
                struct xg_name_vars v;
                xg_name_vars_set(&v, default_name, adapter, xg_kind_name(*kind));
                xg_name_expand(name, size, r->rules[i].name, &v);
            } else
                snprintf(name, size, "%s", default_name);
            if (r->rules[i].has_kind) *kind = r->rules[i].kind;
            return true;
        }
    }
    snprintf(name, size, "%s", default_name);
    return false;
}

void xg_globs_free(struct xg_globs *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->globs[i]);
    free(g->globs);
    g->globs = NULL;
    g->n = 0;
}

int xg_globs_from_conf(const struct xg_conf *node, struct xg_globs *out, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    if (!node) return 0;
    size_t n = node->type == XG_CONF_SCALAR ? 1 : node->n_items;
    if (node->type == XG_CONF_MAP)
        return xg_conf_error(err, node, -EINVAL, "'%s' must be a glob or a list of globs",
                             node->key ? node->key : "globs");
    out->globs = calloc(n ? n : 1, sizeof *out->globs);
    if (!out->globs) return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const struct xg_conf *it = node->type == XG_CONF_SCALAR ? node : node->items[i];
        if (it->type != XG_CONF_SCALAR) {
            xg_globs_free(out);
            return xg_conf_error(err, it, -EINVAL, "'%s' items must be strings",
                                 node->key ? node->key : "globs");
        }
        if (!(out->globs[out->n++] = strdup(it->value))) {
            xg_globs_free(out);
            return -ENOMEM;
        }
    }
    return 0;
}

bool xg_globs_match(const struct xg_globs *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (fnmatch(g->globs[i], name, 0) == 0) return true;
    return false;
}
