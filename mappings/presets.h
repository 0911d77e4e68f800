/* Frame presets shipped as YAML in mappings/presets/ and embedded into the binary. */
#ifndef XG_PRESETS_H
#define XG_PRESETS_H

/** One embedded file: name (file name without .yaml) and its NUL-terminated text. */
struct xg_embedded_file {
    const char *name;
    const char *text;
};

/** All presets, terminated by {NULL, NULL}. Generated at build time. */
extern const struct xg_embedded_file xg_embedded_presets[];

#endif
