build/src/proc/environ.o: src/proc/environ.c src/proc/environ.h
src/proc/environ.h:
