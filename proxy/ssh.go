package proxy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"time"
)

// A SOCKS reply code cannot carry a reason, and ssh reports any refusal as
// "Connection closed by UNKNOWN port 65535", which leaves a user of ssh or
// git to guess that the sandbox, not the server, said no. SSH itself can
// say why: a server may end the transport with SSH_MSG_DISCONNECT before
// any key exchange (RFC 4253 §11.1), and OpenSSH prints its description:
//
//	Received disconnect from UNKNOWN port 65535:1: cordon: github.com:22 blocked: use https
//
// So for a refused destination on port 22 the proxy answers the SOCKS
// request with success and plays an SSH server just long enough to refuse.
// Nothing reaches the destination: the proxy never dialled it, and the
// refusal is recorded as a violation like any other. A client that is not
// SSH sees an SSH banner and a closed connection.

const (
	// sshIdent is the proxy's identification line (RFC 4253 §4.2).
	sshIdent = "SSH-2.0-cordon\r\n"
	// sshIdentTimeout bounds the wait for the client's identification.
	sshIdentTimeout = 5 * time.Second
	// sshKexWait bounds the wait for the client's first packet after it.
	sshKexWait = time.Second
	// sshMaxIdent is the longest identification line, CR LF included.
	sshMaxIdent = 255
	// sshMaxPacket is the largest packet every implementation must take
	// (RFC 4253 §6.1).
	sshMaxPacket = 35000

	sshMsgDisconnect            = 1
	sshDisconnectHostNotAllowed = 1 // SSH_DISCONNECT_HOST_NOT_ALLOWED_TO_CONNECT
)

// refuseSSH answers a SOCKS request for target (host:22) that the rules
// refused for reason, in SSH, then hangs up.
//
// The disconnect waits for the client's first packet, the KEXINIT it
// sends unprompted right after its identification: a client still writing
// when the answer and the end of the stream arrive can fail on the write
// before it reads why (ssh behind a ProxyCommand that exits at end of
// stream reports "Broken pipe"). A client that waits for the server's
// KEXINIT instead gets the answer after sshKexWait.
func refuseSSH(c net.Conn, target, reason string) {
	defer hangUp(c)
	if writeReply(c, repSucceeded, netip.AddrPort{}) != nil {
		return
	}
	if _, err := io.WriteString(c, sshIdent); err != nil {
		return
	}
	c.SetDeadline(time.Now().Add(sshIdentTimeout))
	br := bufio.NewReaderSize(c, sshMaxIdent)
	if line, err := br.ReadSlice('\n'); err != nil || !bytes.HasPrefix(line, []byte("SSH-")) {
		return // not SSH, or too slow
	}
	c.SetDeadline(time.Now().Add(sshKexWait))
	skipSSHPacket(br)
	c.SetWriteDeadline(time.Now().Add(sshIdentTimeout))
	c.Write(sshDisconnect("cordon: " + target + " blocked: " + reason))
}

// skipSSHPacket reads and drops one binary packet, if one comes.
func skipSSHPacket(r io.Reader) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return
	}
	if n := binary.BigEndian.Uint32(l[:]); n <= sshMaxPacket {
		io.CopyN(io.Discard, r, int64(n))
	}
}

// sshDisconnect returns SSH_MSG_DISCONNECT (reason "host not allowed to
// connect", description, no language tag) as the binary packet sent before
// keys exist (RFC 4253 §6): uint32 packet_length, byte padding_length,
// payload, random padding, no MAC. The padding is at least 4 bytes and
// makes the whole packet a multiple of 8 bytes, the block size while no
// cipher is in use; OpenSSH drops a packet that is not.
func sshDisconnect(description string) []byte {
	payload := []byte{sshMsgDisconnect}
	payload = binary.BigEndian.AppendUint32(payload, sshDisconnectHostNotAllowed)
	payload = binary.BigEndian.AppendUint32(payload, uint32(len(description)))
	payload = append(payload, description...)
	payload = binary.BigEndian.AppendUint32(payload, 0) // language tag ""

	pad := 8 - (4+1+len(payload))%8
	if pad < 4 {
		pad += 8
	}
	p := binary.BigEndian.AppendUint32(nil, uint32(1+len(payload)+pad))
	p = append(p, byte(pad))
	p = append(p, payload...)
	padding := make([]byte, pad)
	rand.Read(padding)
	return append(p, padding...)
}
