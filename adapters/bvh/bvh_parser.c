/* BVH parser (see bvh_parser.h). */
#include "adapters/bvh/bvh_parser.h"
#include "core/conf/path.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define TOK_MAX 128 /* longest token kept (longer ones are cut for messages and rejected) */

static const char *const channel_names[] = {"Xposition", "Yposition", "Zposition",
                                            "Xrotation", "Yrotation", "Zrotation"};

const char *bvh_channel_name(enum bvh_channel c)
{
    return (unsigned)c < 6 ? channel_names[c] : "?";
}

/* ---- tokenizer ---- */

struct lexer {
    const char *p, *end;
    int line;
    /* the current token */
    char tok[TOK_MAX];
    size_t tok_len; /* real length (may exceed TOK_MAX - 1) */
    int tok_line;
    bool eof;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Next token: '{' and '}' are tokens by themselves; anything else runs to whitespace or a brace.
 * Sets lx->eof at the end of input (tok = ""). NUL bytes count as token characters. */
static void next(struct lexer *lx)
{
    while (lx->p < lx->end && is_space(*lx->p)) {
        if (*lx->p == '\n') lx->line++;
        lx->p++;
    }
    lx->tok_line = lx->line;
    lx->tok_len = 0;
    lx->tok[0] = '\0';
    if (lx->p >= lx->end) {
        lx->eof = true;
        return;
    }
    const char *s = lx->p;
    if (*s == '{' || *s == '}') {
        lx->p++;
    } else {
        while (lx->p < lx->end && !is_space(*lx->p) && *lx->p != '{' && *lx->p != '}')
            lx->p++;
    }
    lx->tok_len = (size_t)(lx->p - s);
    size_t n = lx->tok_len < TOK_MAX - 1 ? lx->tok_len : TOK_MAX - 1;
    memcpy(lx->tok, s, n);
    lx->tok[n] = '\0';
}

/* The current token for a message: printable ASCII only, cut at 40 characters. */
static const char *shown(const struct lexer *lx, char buf[64])
{
    if (lx->eof) return "end of file";
    size_t n = 0;
    buf[n++] = '\'';
    for (size_t i = 0; i < lx->tok_len && i < 40; i++) {
        unsigned char c = (unsigned char)lx->tok[i];
        buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (lx->tok_len > 40) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return buf;
}

static bool tok_is(const struct lexer *lx, const char *kw)
{
    return !lx->eof && lx->tok_len == strlen(kw) && strcasecmp(lx->tok, kw) == 0;
}

static int syntax(struct lexer *lx, struct xg_error *err, const char *expected)
{
    char b[64];
    return xg_error_set(err, -EPROTO, "line %d: expected %s, got %s", lx->tok_line, expected,
                        shown(lx, b));
}

/* Parse the current token as a finite number. */
static int number(struct lexer *lx, double *out)
{
    if (lx->eof || lx->tok_len == 0 || lx->tok_len >= TOK_MAX - 1) return -1;
    char c0 = lx->tok[0];
    /* digits, sign or '.' only: strtod's inf/nan/hex spellings are not BVH */
    if (!((c0 >= '0' && c0 <= '9') || c0 == '-' || c0 == '+' || c0 == '.')) return -1;
    for (size_t i = 0; i < lx->tok_len; i++) {
        char c = lx->tok[i];
        if (c == 'x' || c == 'X' || c == 'n' || c == 'N' || c == 'i' || c == 'I' || c == '\0')
            return -1;
    }
    char *e;
    double v = strtod(lx->tok, &e);
    if (e != lx->tok + lx->tok_len || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int expect_number(struct lexer *lx, double *out, const char *what, struct xg_error *err)
{
    next(lx);
    if (number(lx, out) == 0) return 0;
    return syntax(lx, err, what);
}

/* ---- hierarchy ---- */

struct parser {
    struct lexer lx;
    struct bvh_limits lim;
    struct bvh_file *f;
    int cap;
    int stack[BVH_DEFAULT_MAX_JOINTS + 1]; /* open joints (depth ≤ joints ≤ max) */
    int depth;
    bool has_offset[BVH_DEFAULT_MAX_JOINTS];
    bool has_channels[BVH_DEFAULT_MAX_JOINTS];
};

static int new_joint(struct parser *ps, const char *name, bool end_site, struct xg_error *err)
{
    struct bvh_file *f = ps->f;
    struct lexer *lx = &ps->lx;
    if (f->n_joints >= ps->lim.max_joints)
        return xg_error_set(err, -E2BIG, "line %d: too many joints (limit %d)", lx->tok_line,
                            ps->lim.max_joints);
    if (f->n_joints == ps->cap) {
        int ncap = ps->cap ? ps->cap * 2 : 32;
        struct bvh_joint *nj = realloc(f->joints, (size_t)ncap * sizeof *nj);
        if (!nj) return xg_error_set(err, -ENOMEM, "out of memory");
        f->joints = nj;
        ps->cap = ncap;
    }
    struct bvh_joint *j = &f->joints[f->n_joints];
    memset(j, 0, sizeof *j);
    snprintf(j->name, sizeof j->name, "%s", name);
    j->parent = ps->depth ? ps->stack[ps->depth - 1] : -1;
    j->end_site = end_site;
    j->channel_index = f->n_channels;
    j->line = lx->tok_line;
    ps->has_offset[f->n_joints] = false;
    ps->has_channels[f->n_joints] = false;
    ps->stack[ps->depth++] = f->n_joints;
    f->n_joints++;
    return 0;
}

/* After ROOT / JOINT: the name, then '{'. */
static int joint_header(struct parser *ps, const char *kw, struct xg_error *err)
{
    struct lexer *lx = &ps->lx;
    char b[64];
    next(lx);
    if (lx->eof || tok_is(lx, "{") || tok_is(lx, "}"))
        return xg_error_set(err, -EPROTO, "line %d: expected a joint name after %s, got %s",
                            lx->tok_line, kw, shown(lx, b));
    if (lx->tok_len >= BVH_NAME_MAX || memchr(lx->tok, '\0', lx->tok_len))
        return xg_error_set(err, -EPROTO, "line %d: joint name %s is too long (max %d) or binary",
                            lx->tok_line, shown(lx, b), BVH_NAME_MAX - 1);
    if (bvh_find_joint(ps->f, lx->tok) >= 0)
        return xg_error_set(err, -EPROTO, "line %d: duplicate joint name %s", lx->tok_line,
                            shown(lx, b));
    char name[BVH_NAME_MAX];
    memcpy(name, lx->tok, lx->tok_len + 1);
    int rc = new_joint(ps, name, false, err);
    if (rc) return rc;
    next(lx);
    if (!tok_is(lx, "{")) return syntax(lx, err, "'{'");
    return 0;
}

static int end_site(struct parser *ps, struct xg_error *err)
{
    struct lexer *lx = &ps->lx;
    next(lx);
    if (!tok_is(lx, "Site")) return syntax(lx, err, "'Site' after 'End'");
    const char *parent = ps->f->joints[ps->stack[ps->depth - 1]].name;
    char name[BVH_NAME_MAX + 16];
    snprintf(name, sizeof name, "%.*s_End", BVH_NAME_MAX - 8, parent);
    for (int k = 2; bvh_find_joint(ps->f, name) >= 0 && k < 1000; k++)
        snprintf(name, sizeof name, "%.*s_End%d", BVH_NAME_MAX - 12, parent, k);
    int rc = new_joint(ps, name, true, err);
    if (rc) return rc;
    next(lx);
    if (!tok_is(lx, "{")) return syntax(lx, err, "'{' after 'End Site'");
    return 0;
}

static int channels(struct parser *ps, struct bvh_joint *j, struct xg_error *err)
{
    struct lexer *lx = &ps->lx;
    char b[64];
    double n;
    if (expect_number(lx, &n, "a channel count (0..6) after CHANNELS", err)) return err->code;
    if (n != floor(n) || n < 0 || n > BVH_MAX_JOINT_CHANNELS)
        return xg_error_set(err, -EPROTO, "line %d: channel count %s is not in 0..6", lx->tok_line,
                            shown(lx, b));
    if (ps->f->n_channels + (int)n > ps->lim.max_channels)
        return xg_error_set(err, -E2BIG, "line %d: too many channels per frame (limit %d)",
                            lx->tok_line, ps->lim.max_channels);
    j->n_channels = (int)n;
    unsigned seen = 0;
    for (int i = 0; i < j->n_channels; i++) {
        next(lx);
        int c = -1;
        for (int k = 0; k < 6; k++)
            if (tok_is(lx, channel_names[k])) c = k;
        if (c < 0)
            return syntax(lx, err,
                          "a channel name (Xposition Yposition Zposition Xrotation Yrotation "
                          "Zrotation)");
        if (seen & (1u << c))
            return xg_error_set(err, -EPROTO, "line %d: channel %s declared twice in joint '%s'",
                                lx->tok_line, shown(lx, b), j->name);
        seen |= 1u << c;
        j->channels[i] = (enum bvh_channel)c;
    }
    j->channel_index = ps->f->n_channels;
    ps->f->n_channels += j->n_channels;
    return 0;
}

static int hierarchy(struct parser *ps, struct xg_error *err)
{
    struct lexer *lx = &ps->lx;
    char b[64];
    int rc;
    next(lx);
    if (!tok_is(lx, "HIERARCHY")) return syntax(lx, err, "'HIERARCHY'");
    for (;;) {
        next(lx);
        if (ps->depth == 0) {
            if (tok_is(lx, "ROOT")) {
                if ((rc = joint_header(ps, "ROOT", err))) return rc;
                continue;
            }
            if (tok_is(lx, "MOTION") && ps->f->n_joints > 0) return 0;
            return syntax(lx, err, ps->f->n_joints ? "'ROOT' or 'MOTION'" : "'ROOT'");
        }
        int ji = ps->stack[ps->depth - 1];
        struct bvh_joint *j = &ps->f->joints[ji];
        if (tok_is(lx, "OFFSET")) {
            if (ps->has_offset[ji])
                return xg_error_set(err, -EPROTO, "line %d: second OFFSET in joint '%s'",
                                    lx->tok_line, j->name);
            for (int k = 0; k < 3; k++)
                if (expect_number(lx, &j->offset[k], "a number (OFFSET x y z)", err))
                    return err->code;
            ps->has_offset[ji] = true;
        } else if (tok_is(lx, "CHANNELS")) {
            if (j->end_site)
                return xg_error_set(err, -EPROTO, "line %d: CHANNELS in an End Site (of '%s')",
                                    lx->tok_line, ps->f->joints[j->parent].name);
            if (ps->has_channels[ji])
                return xg_error_set(err, -EPROTO, "line %d: second CHANNELS in joint '%s'",
                                    lx->tok_line, j->name);
            /* the frame columns follow file order: a joint's channels must come before its
             * children's (they always do in practice) */
            if (ji != ps->f->n_joints - 1)
                return xg_error_set(err, -EPROTO,
                                    "line %d: CHANNELS of joint '%s' after its child joints",
                                    lx->tok_line, j->name);
            if ((rc = channels(ps, j, err))) return rc;
            ps->has_channels[ji] = true;
        } else if (tok_is(lx, "JOINT")) {
            if (j->end_site) return syntax(lx, err, "OFFSET or '}' in an End Site");
            if ((rc = joint_header(ps, "JOINT", err))) return rc;
        } else if (tok_is(lx, "End")) {
            if (j->end_site) return syntax(lx, err, "OFFSET or '}' in an End Site");
            if ((rc = end_site(ps, err))) return rc;
        } else if (tok_is(lx, "}")) {
            if (!ps->has_offset[ji])
                return xg_error_set(err, -EPROTO, "line %d: joint '%s' (line %d) has no OFFSET",
                                    lx->tok_line, j->name, j->line);
            ps->depth--;
        } else {
            (void)b;
            return syntax(lx, err,
                          j->end_site ? "OFFSET or '}' in an End Site"
                                      : "OFFSET, CHANNELS, JOINT, End Site or '}'");
        }
    }
}

/* "Frames:" or "Frames" ":" (same for "Time:"). */
static int keyword_colon(struct lexer *lx, const char *kw, const char *what, struct xg_error *err)
{
    char with[32];
    snprintf(with, sizeof with, "%s:", kw);
    next(lx);
    if (tok_is(lx, with)) return 0;
    if (tok_is(lx, kw)) {
        next(lx);
        if (tok_is(lx, ":")) return 0;
    }
    return syntax(lx, err, what);
}

static int motion(struct parser *ps, struct xg_error *err)
{
    struct lexer *lx = &ps->lx;
    struct bvh_file *f = ps->f;
    char b[64];
    double v;
    if (keyword_colon(lx, "Frames", "'Frames:'", err)) return err->code;
    if (expect_number(lx, &v, "a frame count after 'Frames:'", err)) return err->code;
    if (v != floor(v) || v < 0)
        return xg_error_set(err, -EPROTO, "line %d: frame count %s is not a whole number >= 0",
                            lx->tok_line, shown(lx, b));
    if (v > (double)ps->lim.max_frames)
        return xg_error_set(err, -E2BIG, "line %d: %s frames exceed the limit of %ld", lx->tok_line,
                            shown(lx, b), ps->lim.max_frames);
    long frames = (long)v;
    if (f->n_channels > 0 && (size_t)frames > ps->lim.max_values / (size_t)f->n_channels)
        return xg_error_set(err, -E2BIG,
                            "line %d: %ld frames x %d channels exceed the limit of %zu values",
                            lx->tok_line, frames, f->n_channels, ps->lim.max_values);
    next(lx);
    if (!tok_is(lx, "Frame")) return syntax(lx, err, "'Frame Time:'");
    if (keyword_colon(lx, "Time", "'Time:' after 'Frame'", err)) return err->code;
    if (expect_number(lx, &f->frame_time, "a frame time in seconds after 'Frame Time:'", err))
        return err->code;
    if (!(f->frame_time > 0) || f->frame_time > 3600)
        return xg_error_set(err, -EPROTO, "line %d: frame time %s is not in (0, 3600] seconds",
                            lx->tok_line, shown(lx, b));
    /* the rows; the buffer grows with what is actually there, so a lying header costs nothing */
    size_t total = (size_t)frames * (size_t)f->n_channels, cap = 0;
    for (size_t i = 0; i < total; i++) {
        next(lx);
        if (number(lx, &v) != 0) {
            long fr = (long)(i / (size_t)f->n_channels) + 1;
            int ch = (int)(i % (size_t)f->n_channels);
            const struct bvh_joint *j = &f->joints[0];
            for (int k = 0; k < f->n_joints; k++)
                if (ch >= f->joints[k].channel_index &&
                    ch < f->joints[k].channel_index + f->joints[k].n_channels)
                    j = &f->joints[k];
            return xg_error_set(err, -EPROTO,
                                "line %d: expected a number for frame %ld of %ld, channel %d "
                                "(%s %s), got %s",
                                lx->tok_line, fr, frames, ch + 1, j->name,
                                bvh_channel_name(j->channels[ch - j->channel_index]), shown(lx, b));
        }
        if (i == cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            if (ncap > total) ncap = total;
            double *nm = realloc(f->motion, ncap * sizeof *nm);
            if (!nm) return xg_error_set(err, -ENOMEM, "out of memory");
            f->motion = nm;
            cap = ncap;
        }
        f->motion[i] = v;
    }
    f->n_frames = frames;
    next(lx);
    if (lx->eof) return 0;
    /* More after the declared rows. Whole rows of numbers are frames the header did not count
     * (real exporters write such files): ignored, as assimp's loader ignores them, and counted in
     * extra_frames for the caller's one warning. Anything else is refused at its first token. */
    const int first_line = lx->tok_line;
    const char *first = shown(lx, b); /* b: lx is not at the end of the file */
    size_t extra = 0;
    while (!lx->eof && f->n_channels > 0 && number(lx, &v) == 0) {
        extra++;
        next(lx);
    }
    if (!lx->eof || extra == 0 || extra % (size_t)f->n_channels)
        return xg_error_set(err, -EPROTO,
                            "line %d: unexpected %s after the last frame (Frames: %ld, %d "
                            "channels per frame)",
                            first_line, first, frames, f->n_channels);
    f->extra_frames = (long)(extra / (size_t)f->n_channels);
    f->extra_line = first_line;
    return 0;
}

int bvh_parse(const char *text, size_t len, const struct bvh_limits *lim, struct bvh_file *out,
              struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    struct parser *ps = calloc(1, sizeof *ps);
    if (!ps) return xg_error_set(err, -ENOMEM, "out of memory");
    ps->lx = (struct lexer){.p = text, .end = text + len, .line = 1};
    ps->lim = (struct bvh_limits){BVH_DEFAULT_MAX_JOINTS, BVH_DEFAULT_MAX_CHANNELS,
                                  BVH_DEFAULT_MAX_FRAMES, BVH_DEFAULT_MAX_VALUES};
    if (lim) {
        if (lim->max_joints > 0 && lim->max_joints < BVH_DEFAULT_MAX_JOINTS)
            ps->lim.max_joints = lim->max_joints;
        if (lim->max_channels > 0) ps->lim.max_channels = lim->max_channels;
        if (lim->max_frames > 0) ps->lim.max_frames = lim->max_frames;
        if (lim->max_values > 0) ps->lim.max_values = lim->max_values;
    }
    ps->f = out;
    int rc = hierarchy(ps, err);
    if (rc == 0) rc = motion(ps, err);
    free(ps);
    if (rc) bvh_free(out);
    return rc;
}

int bvh_load(const char *path, const struct bvh_limits *lim, struct bvh_file *out,
             struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    int orc = 0;
    const char *kind = NULL;
    FILE *fp = xg_file_fopen_regular(path, "rb", false, &orc, &kind); /* never blocks */
    if (!fp)
        return xg_error_set(err, orc, "%s: cannot open: %s", path, xg_file_strerror(orc, kind));
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1L << 30)) {
        fclose(fp);
        return xg_error_set(err, -EINVAL, "%s: not a regular file of at most 1 GiB", path);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n ? n : 1);
    if (!buf) {
        fclose(fp);
        return xg_error_set(err, -ENOMEM, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, n, fp);
    int rerr = ferror(fp);
    fclose(fp);
    if (rerr || got != n) {
        free(buf);
        return xg_error_set(err, -EIO, "%s: read error", path);
    }
    int rc = bvh_parse(buf, n, lim, out, err);
    free(buf);
    if (rc) xg_error_prefix(err, "%s: ", path);
    return rc;
}

void bvh_free(struct bvh_file *f)
{
    if (!f) return;
    free(f->joints);
    free(f->motion);
    memset(f, 0, sizeof *f);
}

int bvh_find_joint(const struct bvh_file *f, const char *name)
{
    for (int i = 0; i < f->n_joints; i++)
        if (strcmp(f->joints[i].name, name) == 0) return i;
    return -1;
}
