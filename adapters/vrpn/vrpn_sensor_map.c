/* vrpn-server tracker/sensor mapping helpers (vrpn_sensor_map.h). */
#include "adapters/vrpn/vrpn_sensor_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/table/names.h"

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int vrpn_natcmp(const char *a, const char *b)
{
    const char *pa = a, *pb = b;
    while (*pa && *pb) {
        if (is_digit(*pa) && is_digit(*pb)) {
            while (*pa == '0')
                pa++;
            while (*pb == '0')
                pb++;
            size_t la = 0, lb = 0;
            while (is_digit(pa[la]))
                la++;
            while (is_digit(pb[lb]))
                lb++;
            if (la != lb) return la < lb ? -1 : 1; /* more significant digits: larger */
            int c = memcmp(pa, pb, la);
            if (c) return c < 0 ? -1 : 1;
            pa += la;
            pb += lb;
            continue;
        }
        if (*pa != *pb) return (unsigned char)*pa < (unsigned char)*pb ? -1 : 1;
        pa++;
        pb++;
    }
    if (*pa || *pb) return *pa ? 1 : -1;
    int c = strcmp(a, b); /* equal as numbers: leading zeros decide */
    return c < 0 ? -1 : c > 0;
}

int vrpn_sensor_map_order(const void *x, const void *y)
{
    const struct xg_entity *ex = *(const struct xg_entity *const *)x;
    const struct xg_entity *ey = *(const struct xg_entity *const *)y;
    int sx = xg_entity_source_sensor(ex) >= 0, sy = xg_entity_source_sensor(ey) >= 0;
    if (sx != sy) return sx ? -1 : 1;
    return vrpn_natcmp(xg_entity_name(ex), xg_entity_name(ey));
}

void vrpn_sensor_map_expand(const char *tpl, const char *origin, const struct xg_entity *e,
                            char *out, size_t size)
{
    struct xg_name_vars v;
    xg_name_vars_set(&v, xg_entity_name(e), origin, xg_kind_name(xg_entity_kind(e)));
    xg_name_expand(out, size, tpl, &v);
}

bool vrpn_bitset_get(const struct vrpn_bitset *s, int64_t b)
{
    return b >= 0 && (size_t)b < s->bits && (s->b[b / 8] >> (b % 8)) & 1;
}

int vrpn_bitset_set(struct vrpn_bitset *s, int64_t b)
{
    if (b < 0) return -EINVAL;
    if ((size_t)b >= s->bits) {
        size_t nb = s->bits ? s->bits : 64;
        while (nb <= (size_t)b)
            nb *= 2;
        uint8_t *u = realloc(s->b, nb / 8);
        if (!u) return -ENOMEM;
        memset(u + s->bits / 8, 0, (nb - s->bits) / 8);
        s->b = u;
        s->bits = nb;
    }
    s->b[b / 8] |= (uint8_t)(1u << (b % 8));
    return 0;
}

void vrpn_bitset_clear(struct vrpn_bitset *s, int64_t b)
{
    if (b >= 0 && (size_t)b < s->bits) s->b[b / 8] &= (uint8_t) ~(1u << (b % 8));
}
