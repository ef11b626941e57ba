build/src/proc/procfs.o: src/proc/procfs.c src/proc/procfs.h \
 src/base/buf.h src/base/error.h
src/proc/procfs.h:
src/base/buf.h:
src/base/error.h:
