build/src/proc/mem.o: src/proc/mem.c src/proc/mem.h src/base/error.h
src/proc/mem.h:
src/base/error.h:
