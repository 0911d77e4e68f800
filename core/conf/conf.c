#include "core/conf/conf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void xg_conf_free(struct xg_conf *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n_items; i++)
        xg_conf_free(c->items[i]);
    free(c->items);
    for (size_t i = 0; i < c->n_asked; i++)
        free(c->asked[i]);
    free(c->asked);
    free(c->key);
    free(c->value);
    free(c);
}

struct xg_conf *xg_conf_new(enum xg_conf_type type, const char *file, int line, int column)
{
    struct xg_conf *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->type = type;
    c->file = file;
    c->line = c->key_line = line;
    c->column = c->key_column = column;
    return c;
}

int xg_conf_append(struct xg_conf *parent, struct xg_conf *child)
{
    /* capacity doubles (4, 8, 16, ...: implicit, the next power of two >= n_items), so that a
     * list of n items costs O(n) copies, not O(n^2) */
    size_t n = parent->n_items;
    if (n == 0 || (n >= 4 && !(n & (n - 1)))) {
        struct xg_conf **items = realloc(parent->items, (n ? 2 * n : 4) * sizeof *items);
        if (!items) return -ENOMEM;
        parent->items = items;
    }
    parent->items[parent->n_items++] = child;
    return 0;
}

/* Remember that `key` was asked for in map c (for "did you mean"). Best effort: on ENOMEM the
 * key is just not remembered. The tree is the loader's (not const data): the typed getters take
 * it as const because reading it only marks nodes. */
static void remember_asked(struct xg_conf *c, const char *key)
{
    for (size_t i = 0; i < c->n_asked; i++)
        if (!strcmp(c->asked[i], key)) return;
    char **a = realloc(c->asked, (c->n_asked + 1) * sizeof *a);
    if (!a) return;
    c->asked = a;
    if ((a[c->n_asked] = strdup(key))) c->n_asked++;
}

struct xg_conf *xg_conf_get(const struct xg_conf *c, const char *key)
{
    if (!c || c->type != XG_CONF_MAP) return NULL;
    remember_asked((struct xg_conf *)c, key);
    for (size_t i = 0; i < c->n_items; i++) {
        if (c->items[i]->key && strcmp(c->items[i]->key, key) == 0) {
            c->items[i]->used = true;
            return c->items[i];
        }
    }
    return NULL;
}

int xg_conf_error(struct xg_error *err, const struct xg_conf *at, int code, const char *fmt, ...)
{
    char msg[XG_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at)
        return xg_error_set(err, code, "%s:%d:%d: %s", at->file ? at->file : "<config>", at->line,
                            at->column, msg);
    return xg_error_set(err, code, "%s", msg);
}

static const char *type_name(enum xg_conf_type t)
{
    return t == XG_CONF_MAP ? "a mapping" : t == XG_CONF_SEQ ? "a list" : "a scalar";
}

int xg_conf_expect(const struct xg_conf *n, enum xg_conf_type type, const char *what,
                   struct xg_error *err)
{
    if (n->type != type)
        return xg_conf_error(err, n, -EINVAL, "'%s' must be %s, not %s", what, type_name(type),
                             type_name(n->type));
    return 0;
}

static const char *node_name(const struct xg_conf *n)
{
    return n->key ? n->key : "item";
}

int xg_conf_string(const struct xg_conf *c, const char *key, const char *def, const char **out,
                   struct xg_error *err)
{
    struct xg_conf *n = xg_conf_get(c, key);
    *out = def;
    if (!n) return 0;
    if (n->type != XG_CONF_SCALAR)
        return xg_conf_error(err, n, -EINVAL, "'%s' must be a string, not %s", key,
                             type_name(n->type));
    *out = n->value;
    return 0;
}

int xg_conf_node_int(const struct xg_conf *n, int64_t min, int64_t max, int64_t *out,
                     struct xg_error *err)
{
    if (n->type != XG_CONF_SCALAR)
        return xg_conf_error(err, n, -EINVAL, "'%s' must be an integer, not %s", node_name(n),
                             type_name(n->type));
    char *end;
    errno = 0;
    long long v = strtoll(n->value, &end, 0);
    if (errno || end == n->value || *end)
        return xg_conf_error(err, n, -EINVAL, "'%s' must be an integer, got '%s'", node_name(n),
                             n->value);
    if (v < min || v > max)
        return xg_conf_error(err, n, -EINVAL, "'%s' = %lld is out of range [%lld, %lld]",
                             node_name(n), v, (long long)min, (long long)max);
    *out = v;
    return 0;
}

int xg_conf_int(const struct xg_conf *c, const char *key, int64_t def, int64_t min, int64_t max,
                int64_t *out, struct xg_error *err)
{
    struct xg_conf *n = xg_conf_get(c, key);
    *out = def;
    return n ? xg_conf_node_int(n, min, max, out, err) : 0;
}

int xg_conf_node_double(const struct xg_conf *n, double min, double max, double *out,
                        struct xg_error *err)
{
    if (n->type != XG_CONF_SCALAR)
        return xg_conf_error(err, n, -EINVAL, "'%s' must be a number, not %s", node_name(n),
                             type_name(n->type));
    char *end;
    errno = 0;
    double v = strtod(n->value, &end);
    if (errno || end == n->value || *end || !isfinite(v))
        return xg_conf_error(err, n, -EINVAL, "'%s' must be a number, got '%s'", node_name(n),
                             n->value);
    if (v < min || v > max)
        return xg_conf_error(err, n, -EINVAL, "'%s' = %g is out of range [%g, %g]", node_name(n), v,
                             min, max);
    *out = v;
    return 0;
}

int xg_conf_double(const struct xg_conf *c, const char *key, double def, double min, double max,
                   double *out, struct xg_error *err)
{
    struct xg_conf *n = xg_conf_get(c, key);
    *out = def;
    return n ? xg_conf_node_double(n, min, max, out, err) : 0;
}

int xg_conf_bool(const struct xg_conf *c, const char *key, bool def, bool *out,
                 struct xg_error *err)
{
    struct xg_conf *n = xg_conf_get(c, key);
    *out = def;
    if (!n) return 0;
    if (n->type == XG_CONF_SCALAR && !n->quoted) {
        if (!strcasecmp(n->value, "true") || !strcasecmp(n->value, "yes") ||
            !strcasecmp(n->value, "on")) {
            *out = true;
            return 0;
        }
        if (!strcasecmp(n->value, "false") || !strcasecmp(n->value, "no") ||
            !strcasecmp(n->value, "off")) {
            *out = false;
            return 0;
        }
    }
    return xg_conf_error(err, n, -EINVAL, "'%s' must be true or false, got '%s'", key,
                         n->type == XG_CONF_SCALAR ? n->value : type_name(n->type));
}

int xg_conf_edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return cap + 1;
    if ((la > lb ? la - lb : lb - la) > (size_t)cap) return cap + 1;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

/* The key asked for in map c nearest to `key` (see xg_conf_check_unused), or NULL. */
static const char *nearest_asked(const struct xg_conf *c, const char *key)
{
    const char *best = NULL;
    int best_d = 3, len = (int)strlen(key);
    for (size_t i = 0; i < c->n_asked; i++) {
        int d = xg_conf_edit_distance(key, c->asked[i], 2);
        if (d < best_d && 2 * d < len) {
            best_d = d;
            best = c->asked[i];
        }
    }
    return best;
}

/* "file:line:col: unknown key 'k'" (+ did you mean) for the unused member n of map c. */
static int unknown_key(const struct xg_conf *c, const struct xg_conf *n, struct xg_error *err)
{
    const char *near = n->key ? nearest_asked(c, n->key) : NULL;
    return xg_error_set(err, -EINVAL, "%s:%d:%d: unknown key '%s'%s%s%s",
                        n->file ? n->file : "<config>", n->key_line, n->key_column, n->key,
                        near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
}

int xg_conf_check_unused(const struct xg_conf *c, struct xg_error *err)
{
    if (!c) return 0;
    for (size_t i = 0; i < c->n_items; i++) {
        const struct xg_conf *n = c->items[i];
        if (c->type == XG_CONF_MAP && !n->used) return unknown_key(c, n, err);
        int rc = xg_conf_check_unused(n, err);
        if (rc) return rc;
    }
    return 0;
}

/* Member `key` present in map c (without marking it used)? */
static bool has_key(const struct xg_conf *c, const char *key)
{
    for (size_t i = 0; i < c->n_items; i++)
        if (c->items[i]->key && !strcmp(c->items[i]->key, key)) return true;
    return false;
}

int xg_conf_unused_each(const struct xg_conf *c, bool typos_only,
                        void (*fn)(void *user, const struct xg_error *e), void *user)
{
    if (!c) return 0;
    int count = 0;
    for (size_t i = 0; i < c->n_items; i++) {
        const struct xg_conf *n = c->items[i];
        if (c->type == XG_CONF_MAP && !n->used) {
            const char *near = n->key ? nearest_asked(c, n->key) : NULL;
            if (!typos_only || (near && !has_key(c, near))) {
                struct xg_error e = {0};
                unknown_key(c, n, &e);
                fn(user, &e);
                count++;
            }
            continue;
        }
        count += xg_conf_unused_each(n, typos_only, fn, user);
    }
    return count;
}

void xg_conf_mark_used(struct xg_conf *c)
{
    c->used = true;
    for (size_t i = 0; i < c->n_items; i++)
        xg_conf_mark_used(c->items[i]);
}
