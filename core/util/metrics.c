#include "core/util/metrics.h"

#include <event2/buffer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct series {
    char *labels;
    double *value; /* separately allocated: stable address */
};

struct family {
    char *name, *help;
    enum xg_metric_type type;
    struct series *series;
    size_t n, cap;
};

struct xg_metrics {
    struct family *fam;
    size_t n, cap;
};

struct xg_metrics *xg_metrics_new(void)
{
    return calloc(1, sizeof(struct xg_metrics));
}

void xg_metrics_free(struct xg_metrics *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        for (size_t j = 0; j < m->fam[i].n; j++) {
            free(m->fam[i].series[j].labels);
            free(m->fam[i].series[j].value);
        }
        free(m->fam[i].series);
        free(m->fam[i].name);
        free(m->fam[i].help);
    }
    free(m->fam);
    free(m);
}

double *xg_metrics_slot(struct xg_metrics *m, const char *name, const char *help,
                        enum xg_metric_type type, const char *labels)
{
    if (!labels) labels = "";
    struct family *f = NULL;
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->fam[i].name, name) == 0) f = &m->fam[i];
    if (f && f->type != type) return NULL;
    if (!f) {
        if (m->n == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 16;
            struct family *nf = realloc(m->fam, cap * sizeof *nf);
            if (!nf) return NULL;
            m->fam = nf;
            m->cap = cap;
        }
        f = &m->fam[m->n];
        memset(f, 0, sizeof *f);
        f->name = strdup(name);
        f->help = strdup(help ? help : "");
        f->type = type;
        if (!f->name || !f->help) {
            free(f->name);
            free(f->help);
            return NULL;
        }
        m->n++;
    }
    for (size_t j = 0; j < f->n; j++)
        if (strcmp(f->series[j].labels, labels) == 0) return f->series[j].value;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        struct series *ns = realloc(f->series, cap * sizeof *ns);
        if (!ns) return NULL;
        f->series = ns;
        f->cap = cap;
    }
    struct series *s = &f->series[f->n];
    s->labels = strdup(labels);
    s->value = calloc(1, sizeof *s->value);
    if (!s->labels || !s->value) {
        free(s->labels);
        free(s->value);
        return NULL;
    }
    f->n++;
    return s->value;
}

static void fmt_value(struct evbuffer *out, double v)
{
    if (isnan(v))
        evbuffer_add_printf(out, "NaN");
    else if (isinf(v))
        evbuffer_add_printf(out, v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 1e15)
        evbuffer_add_printf(out, "%.0f", v);
    else
        evbuffer_add_printf(out, "%.9g", v);
}

int xg_metrics_render(const struct xg_metrics *m, struct evbuffer *out)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct family *f = &m->fam[i];
        evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
                            f->type == XG_METRIC_COUNTER ? "counter" : "gauge");
        for (size_t j = 0; j < f->n; j++) {
            if (f->series[j].labels[0])
                evbuffer_add_printf(out, "%s{%s} ", f->name, f->series[j].labels);
            else
                evbuffer_add_printf(out, "%s ", f->name);
            fmt_value(out, *f->series[j].value);
            evbuffer_add(out, "\n", 1);
        }
    }
    return 0;
}

char *xg_metrics_escape(const char *value, char *buf, size_t size)
{
    size_t o = 0;
    for (; *value && o + 3 < size; value++) {
        if (*value == '\\' || *value == '"') {
            buf[o++] = '\\';
            buf[o++] = *value;
        } else if (*value == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else {
            buf[o++] = *value;
        }
    }
    if (size) buf[o < size ? o : size - 1] = '\0';
    return buf;
}
