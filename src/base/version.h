/* version.h — the vitals release. */
#ifndef VT_BASE_VERSION_H
#define VT_BASE_VERSION_H
#define VT_VERSION "0.1.0"
#endif
