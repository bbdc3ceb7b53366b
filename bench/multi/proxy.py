"""A TCP relay that counts the bytes it carries each way, so a benchmark can
see what postgres_fdw puts on the wire: Relay(target_port).port listens on
127.0.0.1 and forwards to target_port; .sent is client-to-server bytes,
.received server-to-client."""

import socket
import threading

CHUNK = 1 << 20


class Relay:
    def __init__(self, target_port):
        self.target_port = int(target_port)
        self.sent = 0
        self.received = 0
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def reset(self):
        with self.lock:
            self.sent = self.received = 0

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            server = socket.create_connection(("127.0.0.1", self.target_port))
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self.pipe, args=(client, server, "sent"), daemon=True).start()
            threading.Thread(target=self.pipe, args=(server, client, "received"), daemon=True).start()

    def pipe(self, src, dst, counter):
        """Copies src to dst until src closes, counting bytes."""
        try:
            while True:
                data = src.recv(CHUNK)
                if not data:
                    break
                dst.sendall(data)
                with self.lock:
                    setattr(self, counter, getattr(self, counter) + len(data))
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
