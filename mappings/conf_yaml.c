#include "mappings/conf_yaml.h"
#include "core/conf/path.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

struct ctx {
    yaml_parser_t parser;
    const char *file;
    struct xg_error *err;
    int depth;    /* mappings/sequences open around the node being parsed */
    size_t nodes; /* nodes created so far */
};

static int perr(struct ctx *c, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int perr(struct ctx *c, int line, int col, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return xg_error_set(c->err, -EINVAL, "%s:%d:%d: %s", c->file, line, col, msg);
}

/* Expand ${VAR} and ${VAR:-default}; returns a malloc'd string or NULL (err set). */
static char *expand_env(struct ctx *c, const char *in, int line, int col)
{
    size_t cap = strlen(in) + 64, len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    for (const char *p = in; *p;) {
        const char *val = NULL;
        size_t vlen = 0;
        char name[128];
        if (p[0] == '$' && p[1] == '{') {
            const char *end = strchr(p + 2, '}');
            if (!end) {
                free(out);
                perr(c, line, col, "unterminated '${' in '%.64s%s'", in,
                     strlen(in) > 64 ? "..." : "");
                return NULL;
            }
            size_t n = (size_t)(end - (p + 2));
            if (n >= sizeof name) n = sizeof name - 1;
            memcpy(name, p + 2, n);
            name[n] = '\0';
            char *def = strstr(name, ":-");
            if (def) {
                *def = '\0';
                def += 2;
            }
            val = getenv(name);
            if (!val || (!*val && def)) val = def;
            if (!val) {
                free(out);
                perr(c, line, col, "environment variable '%s' is not set", name);
                return NULL;
            }
            vlen = strlen(val);
            p = end + 1;
        } else {
            val = p;
            vlen = 1;
            p++;
        }
        if (len + vlen > XG_CONF_YAML_MAX_SCALAR) {
            free(out);
            perr(c, line, col, "value longer than %d bytes after ${VAR} expansion",
                 XG_CONF_YAML_MAX_SCALAR);
            return NULL;
        }
        if (len + vlen + 1 > cap) {
            cap = (len + vlen + 1) * 2;
            char *n2 = realloc(out, cap);
            if (!n2) {
                free(out);
                return NULL;
            }
            out = n2;
        }
        memcpy(out + len, val, vlen);
        len += vlen;
    }
    out[len] = '\0';
    return out;
}

static int next(struct ctx *c, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&c->parser, ev)) {
        int line = (int)c->parser.problem_mark.line + 1,
            col = (int)c->parser.problem_mark.column + 1;
        return xg_error_set(c->err, -EINVAL, "%s:%d:%d: YAML syntax error: %s%s%s", c->file, line,
                            col, c->parser.problem ? c->parser.problem : "?",
                            c->parser.context ? " " : "",
                            c->parser.context ? c->parser.context : "");
    }
    return 0;
}

static int parse_node(struct ctx *c, yaml_event_t *ev, struct xg_conf **out);

static int parse_children(struct ctx *c, struct xg_conf *node, yaml_event_type_t end)
{
    for (;;) {
        yaml_event_t ev;
        int rc = next(c, &ev);
        if (rc) return rc;
        if (ev.type == end) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (node->type == XG_CONF_MAP) {
            if (ev.type != YAML_SCALAR_EVENT) {
                rc = perr(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
                          "mapping keys must be plain strings");
                yaml_event_delete(&ev);
                return rc;
            }
            int kl = (int)ev.start_mark.line + 1, kc = (int)ev.start_mark.column + 1;
            if (ev.data.scalar.length > XG_CONF_YAML_MAX_KEY) {
                rc = perr(c, kl, kc, "key of %zu bytes is longer than %d", ev.data.scalar.length,
                          XG_CONF_YAML_MAX_KEY);
                yaml_event_delete(&ev);
                return rc;
            }
            char *key = strdup((const char *)ev.data.scalar.value);
            yaml_event_delete(&ev);
            if (!key) return -ENOMEM;
            for (size_t i = 0; i < node->n_items; i++) {
                if (strcmp(node->items[i]->key, key) == 0) {
                    rc = perr(c, kl, kc, "duplicate key '%s'", key);
                    free(key);
                    return rc;
                }
            }
            yaml_event_t vev;
            if ((rc = next(c, &vev))) {
                free(key);
                return rc;
            }
            struct xg_conf *child = NULL;
            rc = parse_node(c, &vev, &child);
            if (rc) {
                free(key);
                return rc;
            }
            child->key = key;
            child->key_line = kl;
            child->key_column = kc;
            if (xg_conf_append(node, child)) {
                xg_conf_free(child);
                return -ENOMEM;
            }
        } else {
            struct xg_conf *child = NULL;
            rc = parse_node(c, &ev, &child);
            if (rc) return rc;
            if (xg_conf_append(node, child)) {
                xg_conf_free(child);
                return -ENOMEM;
            }
        }
    }
}

/* Consumes *ev. */
static int parse_node(struct ctx *c, yaml_event_t *ev, struct xg_conf **out)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    int rc = 0;
    struct xg_conf *n = NULL;
    if (++c->nodes > XG_CONF_YAML_MAX_NODES) {
        rc = perr(c, line, col, "more than %d YAML nodes (values, mappings, lists) in one file",
                  XG_CONF_YAML_MAX_NODES);
        yaml_event_delete(ev);
        return rc;
    }
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        rc = perr(c, line, col, "YAML aliases are not supported");
        break;
    case YAML_SCALAR_EVENT:
        if (ev->data.scalar.anchor) {
            rc = perr(c, line, col, "YAML anchors are not supported");
            break;
        }
        if (ev->data.scalar.length > XG_CONF_YAML_MAX_SCALAR) {
            rc = perr(c, line, col, "value of %zu bytes is longer than %d", ev->data.scalar.length,
                      XG_CONF_YAML_MAX_SCALAR);
            break;
        }
        n = xg_conf_new(XG_CONF_SCALAR, c->file, line, col);
        if (!n) {
            rc = -ENOMEM;
            break;
        }
        n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        n->value = expand_env(c, (const char *)ev->data.scalar.value, line, col);
        if (!n->value) rc = c->err && c->err->code ? c->err->code : -ENOMEM;
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool map = ev->type == YAML_MAPPING_START_EVENT;
        if ((map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor)) {
            rc = perr(c, line, col, "YAML anchors are not supported");
            break;
        }
        /* bounded: parse_node and parse_children recurse once per level */
        if (c->depth >= XG_CONF_YAML_MAX_DEPTH) {
            rc = perr(c, line, col, "%s nested deeper than %d levels", map ? "mapping" : "list",
                      XG_CONF_YAML_MAX_DEPTH);
            break;
        }
        n = xg_conf_new(map ? XG_CONF_MAP : XG_CONF_SEQ, c->file, line, col);
        if (!n) {
            rc = -ENOMEM;
            break;
        }
        c->depth++;
        rc = parse_children(c, n, map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT);
        c->depth--;
        break;
    }
    default:
        rc = perr(c, line, col, "unexpected YAML event");
    }
    yaml_event_delete(ev);
    if (rc) {
        xg_conf_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

struct xg_conf *xg_conf_yaml_parse(const char *text, size_t len, const char *file,
                                   struct xg_error *err)
{
    struct ctx c = {.err = err};
    char *fname = strdup(file ? file : "<config>");
    if (!fname) {
        xg_error_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    c.file = fname;
    xg_error_clear(err);
    if (!yaml_parser_initialize(&c.parser)) {
        free(fname);
        xg_error_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&c.parser, (const unsigned char *)text, len);
    struct xg_conf *root = NULL;
    int rc = 0;
    yaml_event_t ev;
    /* stream start, document start (or stream end) */
    while (!(rc = next(&c, &ev))) {
        yaml_event_type_t type = ev.type;
        if (type == YAML_STREAM_START_EVENT || type == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (type == YAML_STREAM_END_EVENT || type == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        rc = parse_node(&c, &ev, &root);
        if (!rc && root->type != XG_CONF_MAP) {
            rc = xg_error_set(err, -EINVAL, "%s:%d:%d: the configuration must be a mapping", fname,
                              root->line, root->column);
        }
        break;
    }
    if (!rc && root) {
        /* a second document is an error */
        yaml_event_t e2;
        while (!(rc = next(&c, &e2))) {
            yaml_event_type_t ty = e2.type;
            int l2 = (int)e2.start_mark.line + 1, c2 = (int)e2.start_mark.column + 1;
            yaml_event_delete(&e2);
            if (ty == YAML_STREAM_END_EVENT) break;
            if (ty == YAML_DOCUMENT_START_EVENT) {
                rc = perr(&c, l2, c2, "only one YAML document is allowed");
                break;
            }
        }
    }
    yaml_parser_delete(&c.parser);
    if (rc) {
        xg_conf_free(root);
        free(fname);
        if (err && !err->code)
            xg_error_set(err, rc, "%s: %s", file ? file : "<config>", "out of memory");
        return NULL;
    }
    if (!root) {
        root = xg_conf_new(XG_CONF_MAP, fname, 1, 1);
        if (!root) {
            free(fname);
            xg_error_set(err, -ENOMEM, "out of memory");
            return NULL;
        }
    }
    return root;
}

struct xg_conf *xg_conf_yaml_load(const char *path, struct xg_error *err)
{
    /* a regular file, or our own standard input (--config /dev/stdin); never a FIFO or a device
     * that would block or never end (core/conf/path.h) */
    int orc = 0;
    const char *kind = NULL;
    FILE *f = xg_file_fopen_regular(path, "rb", true, &orc, &kind);
    if (!f) {
        if (kind && !strcmp(kind, "a directory"))
            xg_error_set(err, -EISDIR, "%s: cannot read: is a directory", path);
        else
            xg_error_set(err, orc, "%s: cannot open: %s", path, xg_file_strerror(orc, kind));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            if (cap >= (16u << 20)) {
                fclose(f);
                free(buf);
                xg_error_set(err, -EFBIG, "%s: file larger than 16 MiB", path);
                return NULL;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        xg_error_set(err, -ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    struct xg_conf *root = xg_conf_yaml_parse(buf, len, path, err);
    free(buf);
    return root;
}

void xg_conf_yaml_free(struct xg_conf *root)
{
    if (!root) return;
    char *file = (char *)root->file;
    xg_conf_free(root);
    free(file);
}
