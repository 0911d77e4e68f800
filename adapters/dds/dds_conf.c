/* dds adapter, configuration: the keys of a `dds` adapter read and checked at create time
 * (domain_id, world_frame, publish_tf, read_tf, pose_topics, twist_topics, topic_prefix, qos,
 * config_file, topics, read_include, read_exclude; security in dds_security.c; see the comment at
 * the top of dds_adapter.c and docs/adapters/dds.md). */
#include "adapters/dds/dds_adapter.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/table/names.h"
#include "core/conf/path.h"
#include "mappings/naming.h"

static int conf_topics(struct dds *d, const struct xg_conf *conf, struct xg_error *err)
{
    const struct xg_conf *list = xg_conf_get(conf, "topics");
    if (!list) return 0;
    int rc = xg_conf_expect(list, XG_CONF_SEQ, "topics", err);
    if (rc) return rc;
    if (list->n_items > DDS_MAX_IN_TOPICS)
        return xg_conf_error(err, list, -EINVAL, "topics: %zu entries, at most %d", list->n_items,
                             DDS_MAX_IN_TOPICS);
    for (size_t i = 0; i < list->n_items; i++) {
        const struct xg_conf *it = list->items[i];
        if ((rc = xg_conf_expect(it, XG_CONF_SCALAR, "topics entry", err))) return rc;
        struct dds_in_topic *t = &d->in[d->n_in];
        const char *why = "longer than 256 bytes";
        if (strlen(it->value) > DDS_TOPIC_MAX ||
            dds_topic_from_ros(it->value, t->dds, sizeof t->dds, &why))
            return xg_conf_error(err, it, -EINVAL,
                                 "topics: '%.80s%s' is not a ROS 2 topic name (%s)", it->value,
                                 strlen(it->value) > 80 ? "..." : "", why);
        for (int j = 0; j < d->n_in; j++)
            if (!strcmp(d->in[j].dds, t->dds))
                return xg_conf_error(err, it, -EINVAL, "topics: '%s' is listed twice", it->value);
        snprintf(t->ros, sizeof t->ros, "%s", it->value);
        const char *src = t->dds + 3; /* after "rt/" */
        xg_name_fit(t->source, sizeof t->source, src, strlen(src));
        d->n_in++;
    }
    return 0;
}

int dds_read_conf(struct dds *d, const char *name, const struct xg_conf *conf, struct xg_error *err)
{
    int rc;
    const char *world, *prefix, *qos, *config_file;
    if ((rc = xg_conf_int(conf, "domain_id", 0, 0, 232, &d->domain_id, err)) ||
        (rc = xg_conf_string(conf, "world_frame", "world", &world, err)) ||
        (rc = xg_conf_bool(conf, "publish_tf", true, &d->publish_tf, err)) ||
        (rc = xg_conf_bool(conf, "read_tf", true, &d->read_tf, err)) ||
        (rc = xg_conf_bool(conf, "pose_topics", false, &d->pose_topics, err)) ||
        (rc = xg_conf_bool(conf, "twist_topics", false, &d->twist_topics, err)) ||
        (rc = xg_conf_string(conf, "topic_prefix", "/xrgate", &prefix, err)) ||
        (rc = xg_conf_string(conf, "qos", "sensor_data", &qos, err)) ||
        (rc = xg_conf_string(conf, "config_file", NULL, &config_file, err)) ||
        (rc = conf_topics(d, conf, err)) || (rc = dds_security_conf(d, conf, err)) ||
        (rc = xg_globs_from_conf(xg_conf_get(conf, "read_include"), &d->read_include, err)) ||
        (rc = xg_globs_from_conf(xg_conf_get(conf, "read_exclude"), &d->read_exclude, err)))
        return rc;
    const char *wf = world[0] == '/' ? world + 1 : world;
    char mapped[DDS_TOPIC_MAX + 1];
    dds_ros_name(mapped, sizeof mapped, wf);
    if (!*wf || strlen(wf) >= sizeof d->world_frame || strcmp(wf, mapped))
        return xg_conf_error(err, xg_conf_get(conf, "world_frame"), -EINVAL,
                             "world_frame '%s' is not a TF frame id (1-127 bytes of "
                             "[A-Za-z0-9_/], no empty token, no token starting with a digit)",
                             world);
    snprintf(d->world_frame, sizeof d->world_frame, "%s", wf);
    char probe[DDS_TOPIC_MAX + 1];
    const char *why = "longer than 128 bytes";
    if (strlen(prefix) > 128 || dds_topic_from_ros(prefix, probe, sizeof probe, &why))
        return xg_conf_error(err, xg_conf_get(conf, "topic_prefix"), -EINVAL,
                             "topic_prefix '%.80s%s' is not a ROS 2 name of at most 128 bytes "
                             "(%s)",
                             prefix, strlen(prefix) > 80 ? "..." : "", why);
    snprintf(d->prefix, sizeof d->prefix, "%s", probe + 2); /* "/..." */
    if (!strcmp(qos, "reliable"))
        d->reliable = true;
    else if (strcmp(qos, "sensor_data"))
        return xg_conf_error(err, xg_conf_get(conf, "qos"), -EINVAL,
                             "qos '%s' must be sensor_data or reliable", qos);
    if (config_file) {
        char abs[PATH_MAX];
        const char *kind = NULL; /* a regular file: Cyclone would block on a FIFO */
        int frc = xg_file_check_regular(config_file, &kind);
        if (frc)
            return xg_conf_error(err, xg_conf_get(conf, "config_file"), frc, "config_file '%s': %s",
                                 config_file, xg_file_strerror(frc, kind));
        if (!realpath(config_file, abs) || strlen(abs) + 8 > sizeof d->config_uri)
            return xg_conf_error(err, xg_conf_get(conf, "config_file"), -EINVAL,
                                 "config_file '%s': cannot resolve the path", config_file);
        snprintf(d->config_uri, sizeof d->config_uri, "file://%s", abs);
    }
    if (!d->publish_tf && !d->pose_topics && !d->twist_topics && !d->read_tf && !d->n_in)
        return xg_conf_error(err, conf, -EINVAL,
                             "dds adapter '%s' neither publishes nor reads anything (publish_tf, "
                             "pose_topics, twist_topics, read_tf and topics are all off)",
                             name);
    return 0;
}
