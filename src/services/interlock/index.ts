// Serial safety interlock services (docs/INTERLOCK.md): the console's serial link, the box
// emulator, socat pty pairs and a guarded port listing.
export * from './serialInterlock';
export * from './interlockEmulator';
export * from './ptyPair';
export * from './listSerialPorts';
