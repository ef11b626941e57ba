build/src/base/error.o: src/base/error.c src/base/error.h
src/base/error.h:
