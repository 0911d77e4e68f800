/* Metrics registry rendered as Prometheus text exposition format (version 0.0.4).
 *
 * A family has a name, help text and type (counter or gauge); each series in it has a label set
 * (preformatted, e.g. `adapter="rig",quality="PREDICTED"`) and a double value slot whose address
 * is stable for the registry's lifetime, so hot paths just do `*slot += 1`. Single-threaded (the
 * reactor thread). The registry owns all memory. */
#ifndef XG_METRICS_H
#define XG_METRICS_H

#include <stddef.h>

struct evbuffer;
struct xg_metrics;

enum xg_metric_type { XG_METRIC_COUNTER, XG_METRIC_GAUGE };

/** New empty registry, or NULL on ENOMEM. */
struct xg_metrics *xg_metrics_new(void);
void xg_metrics_free(struct xg_metrics *m);

/** The value slot of series (name, labels), creating family and series on first use.
 *  `labels` may be NULL or "" for none. Returns NULL on ENOMEM, or if `name` was registered
 *  before with another type. The slot starts at 0. */
double *xg_metrics_slot(struct xg_metrics *m, const char *name, const char *help,
                        enum xg_metric_type type, const char *labels);

/** Append the whole registry as Prometheus text to `out`. Families in registration order. */
int xg_metrics_render(const struct xg_metrics *m, struct evbuffer *out);

/** Escape a label value (\\, \" and \n) into buf (always NUL-terminated); returns buf. */
char *xg_metrics_escape(const char *value, char *buf, size_t size);

#endif
