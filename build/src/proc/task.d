build/src/proc/task.o: src/proc/task.c src/proc/task.h src/base/error.h \
 src/base/scan.h
src/proc/task.h:
src/base/error.h:
src/base/scan.h:
