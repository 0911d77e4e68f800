#include "core/table/egress_controls.h"

#include <stdio.h>
#include <string.h>

void xg_egress_controls_init(struct xg_egress_controls *c, int max_buttons, int max_analogs,
                             const char *why)
{
    memset(c, 0, sizeof *c);
    c->max_buttons = max_buttons;
    c->max_analogs = max_analogs;
    c->why = why;
}

static bool remembered(struct xg_egress_controls *c, uint32_t id, bool *full)
{
    for (unsigned i = 0; i < c->n_warned; i++)
        if (c->warned[i] == id) return true;
    *full = c->n_warned >= XG_EGRESS_CONTROLS_REMEMBERED;
    if (!*full) c->warned[c->n_warned++] = id;
    return false;
}

unsigned xg_egress_controls_check(struct xg_egress_controls *c, const char *adapter,
                                  const struct xg_entity *e)
{
    const int n_buttons = xg_entity_buttons(e, NULL), n_analogs = xg_entity_analogs(e, NULL);
    int nb = n_buttons > c->max_buttons ? n_buttons - c->max_buttons : 0;
    int na = n_analogs > c->max_analogs ? n_analogs - c->max_analogs : 0;
    if (!nb && !na) return 0;
    c->not_carried += (uint64_t)(nb + na);
    bool full = false;
    if (remembered(c, xg_entity_id(e), &full)) return (unsigned)(nb + na);
    char left[96] = "", carried[96];
    if (nb && na)
        snprintf(left, sizeof left, "buttons %d..%d and analog channels %d..%d", c->max_buttons,
                 n_buttons - 1, c->max_analogs, n_analogs - 1);
    else if (nb)
        snprintf(left, sizeof left, "buttons %d..%d", c->max_buttons, n_buttons - 1);
    else
        snprintf(left, sizeof left, "analog channels %d..%d", c->max_analogs, n_analogs - 1);
    if (c->max_buttons || c->max_analogs)
        snprintf(carried, sizeof carried, "it carries buttons 0..%d and analogs 0..%d",
                 c->max_buttons - 1, c->max_analogs - 1);
    else
        snprintf(carried, sizeof carried, "it carries none");
    XG_WARN_PEER(full ? &c->lim : NULL, adapter,
                 "entity '%s': %s not sent: %s (%s); a vrpn-server carries every button, analog "
                 "and dial (counted in controls_not_carried)",
                 xg_entity_name(e), left, c->why, carried);
    return (unsigned)(nb + na);
}
