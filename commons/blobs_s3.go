package commons

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Blobs keeps the objects in an S3 bucket under a prefix, through
// minio-go (a client kept by MinIO that speaks to any S3-compatible
// store: AWS, R2, GCS's XML API, MinIO, SeaweedFS, Garage). A conditional
// Put is a PutObject with If-Match (the stored ETag) or If-None-Match: *,
// which AWS S3 (since 2024), MinIO, R2 and GCS honour; on a store that
// ignores them two replicas can both pass the rollback check against one
// old file, so run replicas only on a store that has them (one replica on
// any store is safe: its writers take turns under a lock of its own).
type s3Blobs struct {
	c      *minio.Client
	tr     *http.Transport
	cfg    S3Config
	prefix string
}

// maxObject bounds what Get reads of one object: far above what the
// server writes (a file is 256 KiB), so a damaged or hostile store cannot
// make a replica read without end.
const maxObject = 16 << 20

// s3Timeout bounds one request to the store that has no deadline of its
// own (opening).
const s3Timeout = 20 * time.Second

// OpenStorage opens the store a --storage URL names, with credentials
// from the environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and
// AWS_SESSION_TOKEN), else MINIO_ROOT_USER and MINIO_ROOT_PASSWORD. It
// checks that the bucket exists and the credentials are taken.
func OpenStorage(ctx context.Context, rawURL string) (Blobs, error) {
	cfg, err := ParseStorageURL(rawURL)
	if err != nil {
		return nil, err
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{&credentials.EnvAWS{}, &credentials.EnvMinio{}})
	if v, err := creds.GetWithContext(nil); err != nil || v.AccessKeyID == "" || v.SecretAccessKey == "" {
		return nil, fmt.Errorf("storage %s: no credentials in the environment; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or MINIO_ROOT_USER and MINIO_ROOT_PASSWORD)", cfg)
	}
	return openS3(ctx, cfg, creds)
}

func openS3(ctx context.Context, cfg S3Config, creds *credentials.Credentials) (*s3Blobs, error) {
	tr, err := minio.DefaultTransport(!cfg.Insecure)
	if err != nil {
		return nil, fmt.Errorf("storage %s: %w", cfg, err)
	}
	tr.MaxIdleConnsPerHost = 256 // replicas talk to one endpoint, many requests at once
	c, err := minio.New(cfg.Endpoint, &minio.Options{Creds: creds, Secure: !cfg.Insecure, Region: cfg.Region, Transport: tr})
	if err != nil {
		return nil, fmt.Errorf("storage %s: %w", cfg, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s3Timeout)
	defer cancel()
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("storage %s: reaching the store: %w (check endpoint=, the credentials, and insecure=1 for plain http)", cfg, s3Err(err))
	}
	if !ok {
		return nil, fmt.Errorf("storage %s: the bucket %q does not exist; create it first (e.g. `mc mb ALIAS/%s`, or in the provider's console)", cfg, cfg.Bucket, cfg.Bucket)
	}
	return &s3Blobs{c: c, tr: tr, cfg: cfg, prefix: cfg.Prefix}, nil
}

func (s *s3Blobs) String() string { return s.cfg.String() }
func (s *s3Blobs) Shared() bool   { return true }
func (s *s3Blobs) Close() error {
	s.tr.CloseIdleConnections()
	return nil
}

// s3Err turns a store's answer into ErrNotExist or ErrConflict where it is
// one, else keeps it with its code.
func s3Err(err error) error {
	if err == nil {
		return nil
	}
	r := minio.ToErrorResponse(err)
	switch {
	case r.Code == minio.NoSuchKey:
		return fmt.Errorf("%w (%s)", ErrNotExist, r.Key)
	case r.StatusCode == http.StatusPreconditionFailed || r.Code == minio.PreconditionFailed ||
		r.Code == "ConditionalRequestConflict" || r.StatusCode == http.StatusConflict && strings.Contains(r.Code, "Conditional"):
		return fmt.Errorf("%w (%s)", ErrConflict, r.Code)
	}
	return err
}

func (s *s3Blobs) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := checkKey(key); err != nil {
		return nil, "", err
	}
	obj, err := s.c.GetObject(ctx, s.cfg.Bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", s3Err(err)
	}
	defer func() { _ = obj.Close() }() // read whole or failed: its close says nothing
	data, err := io.ReadAll(io.LimitReader(obj, maxObject+1))
	if err != nil {
		return nil, "", s3Err(err)
	}
	if len(data) > maxObject {
		return nil, "", fmt.Errorf("%s in %s is over %d bytes: not an object this server wrote", key, s, maxObject)
	}
	info, err := obj.Stat() // of the same response: the version of these bytes
	if err != nil {
		return nil, "", s3Err(err)
	}
	return data, info.ETag, nil
}

func (s *s3Blobs) Stat(ctx context.Context, key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	info, err := s.c.StatObject(ctx, s.cfg.Bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return "", s3Err(err)
	}
	return info.ETag, nil
}

func (s *s3Blobs) Put(ctx context.Context, key string, data []byte, cond Cond) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true}
	switch {
	case cond.IfAbsent:
		opts.SetMatchETagExcept("*")
	case cond.IfMatch != "":
		opts.SetMatchETag(cond.IfMatch)
	}
	info, err := s.c.PutObject(ctx, s.cfg.Bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)), opts)
	if err = s3Err(err); errors.Is(err, ErrNotExist) {
		// If-Match of an absent object: S3 and MinIO answer 404, not 412.
		return "", fmt.Errorf("%s: %w", key, ErrConflict)
	}
	if err != nil {
		return "", err
	}
	return info.ETag, nil
}

func (s *s3Blobs) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := s.c.RemoveObject(ctx, s.cfg.Bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err = s3Err(err); errors.Is(err, ErrNotExist) {
		return nil
	}
	return err
}

func (s *s3Blobs) List(ctx context.Context, prefix, after string, fn func(key, version string) error) error {
	return s.walk(ctx, prefix, after, func(obj minio.ObjectInfo, key string) error { return fn(key, obj.ETag) })
}

func (s *s3Blobs) ListSizes(ctx context.Context, prefix string, fn func(key string, size int64) error) error {
	return s.walk(ctx, prefix, "", func(obj minio.ObjectInfo, key string) error { return fn(key, obj.Size) })
}

// walk calls fn with every object under prefix after after, in key order.
func (s *s3Blobs) walk(ctx context.Context, prefix, after string, fn func(obj minio.ObjectInfo, key string) error) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	opts := minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}
	if after != "" {
		opts.StartAfter = s.prefix + after
	}
	for obj := range s.c.ListObjectsIter(ctx, s.cfg.Bucket, opts) { // the iterator leaves no goroutine when fn stops it

		if obj.Err != nil {
			return s3Err(obj.Err)
		}
		key := strings.TrimPrefix(obj.Key, s.prefix)
		if checkKey(key) != nil || key <= after {
			continue // an object this server did not write
		}
		if err := fn(obj, key); err != nil {
			return err
		}
	}
	// The iterator ends without an error when ctx does: a listing cut
	// short must not read as the whole of what the bucket holds.
	return ctx.Err()
}
