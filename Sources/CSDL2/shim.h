// SDL2, joystick and game-controller subsystems only. Included by full path (see Package.swift).
#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>
