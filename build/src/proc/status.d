build/src/proc/status.o: src/proc/status.c src/proc/status.h \
 src/base/error.h src/proc/procfs.h src/base/buf.h src/base/scan.h
src/proc/status.h:
src/base/error.h:
src/proc/procfs.h:
src/base/buf.h:
src/base/scan.h:
