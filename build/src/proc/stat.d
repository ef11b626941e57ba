build/src/proc/stat.o: src/proc/stat.c src/proc/stat.h src/base/error.h \
 src/base/scan.h
src/proc/stat.h:
src/base/error.h:
src/base/scan.h:
