build/src/base/scan.o: src/base/scan.c src/base/scan.h
src/base/scan.h:
