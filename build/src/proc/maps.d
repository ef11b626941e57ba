build/src/proc/maps.o: src/proc/maps.c src/proc/maps.h src/base/error.h \
 src/proc/procfs.h src/base/buf.h src/base/scan.h
src/proc/maps.h:
src/base/error.h:
src/proc/procfs.h:
src/base/buf.h:
src/base/scan.h:
